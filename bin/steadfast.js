#!/usr/bin/env node
'use strict'

// The `steadfast` command line (lib/cli/): list, describe, history, tree, cancel,
// dead-letters and doctor. `steadfast --help` lists them.

const { main } = require('../lib/cli')

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    process.stderr.write(`steadfast: unexpected error: ${e && e.message ? e.message : e}\n`)
    process.exitCode = 2
  },
)
