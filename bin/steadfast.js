#!/usr/bin/env node
'use strict'

// The `steadfast` command line. Subcommands: doctor.

const USAGE = `Usage: steadfast <command> [options]

Commands:
  doctor    read-only health report of a steadfast or duroxide-pg schema
            (steadfast doctor --help for its options)`

async function main(argv) {
  const [command, ...rest] = argv
  if (command === undefined) {
    process.stderr.write(USAGE + '\n')
    return 2
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(require('../package.json').version + '\n')
    return 0
  }
  if (command === 'doctor') {
    const { doctorMain } = require('../lib/doctor')
    return doctorMain(rest)
  }
  const shown = /^postgres(ql)?:/i.test(command) ? '<url>' : command.slice(0, 40)
  process.stderr.write(`steadfast: unknown command ${JSON.stringify(shown)}\n\n${USAGE}\n`)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    process.stderr.write(`steadfast: unexpected error: ${e && e.message ? e.message : e}\n`)
    process.exitCode = 2
  },
)
