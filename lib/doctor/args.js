'use strict'

// Command-line parsing for `steadfast doctor`. Every error is a UsageError that names the flag.
// Doctor keeps this hand-written parser (the other commands use parseArgs, lib/cli/args.js):
// it takes a value that starts with one dash (`--sample-seconds -1`) and then says what is
// wrong with the number, where strict parseArgs refuses the value as ambiguous.

const { UsageError } = require('../cli/errors')
const { SCHEMA_RE, parseInteger, redactArg } = require('../cli/args')

const DEFAULTS = Object.freeze({
  schema: 'steadfast',
  json: false,
  sampleSeconds: 3,
  maxAttempts: 10,
})

const LIMITS = Object.freeze({
  sampleSeconds: { min: 0, max: 300 },
  maxAttempts: { min: 1, max: 1_000_000 },
})

const USAGE = `Usage: steadfast doctor --url postgres://USER[:PASSWORD]@HOST[:PORT]/DB [options]

Read-only health report of a steadfast (or upstream duroxide-pg) schema.

Options:
  --url URL             the database (postgres:// or postgresql://); required.
                        Leave the password out to use PGPASSWORD or ~/.pgpass.
  --schema NAME         schema to inspect (default: steadfast; duroxide-pg's default is public)
  --json                print one JSON object instead of the text report
  --sample-seconds N    seconds of live, read-only sampling of how fast ready work is
                        consumed (integer 0-300, default 3; 0 skips sampling)
  --max-attempts N      the runtime's max_attempts (integer 1-1000000, default 10)
  -h, --help            show this help

Exit status: 0 healthy, 1 unhealthy, 2 usage, connection or schema error.`

/**
 * Parse the arguments that follow `doctor`. Accepts `--flag value` and `--flag=value`.
 * Returns `{ help: true }` for -h/--help, otherwise the full options object.
 */
function parseDoctorArgs(argv) {
  const opts = { ...DEFAULTS, url: undefined, help: false }
  const seen = new Set()
  const takesValue = new Set(['--url', '--schema', '--sample-seconds', '--max-attempts'])
  const boolean = new Set(['--json', '--help', '-h'])
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    let flag = arg
    let value
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1
    if (eq > 0) {
      flag = arg.slice(0, eq)
      value = arg.slice(eq + 1)
    }
    if (!arg.startsWith('-') || arg === '-' ) {
      throw new UsageError(`unexpected argument ${JSON.stringify(redactArg(arg))} (options start with --; see --help)`)
    }
    if (!takesValue.has(flag) && !boolean.has(flag)) {
      throw new UsageError(`unknown option ${flag} (see --help)`)
    }
    const key = flag === '-h' ? '--help' : flag
    if (seen.has(key)) throw new UsageError(`${flag} given more than once`)
    seen.add(key)
    if (boolean.has(flag)) {
      if (value !== undefined) throw new UsageError(`${flag} takes no value`)
      if (key === '--help') opts.help = true
      else opts.json = true
      continue
    }
    if (value === undefined) {
      const next = argv[i + 1]
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw new UsageError(`${flag} needs a value`)
      }
      value = next
      i++
    }
    switch (flag) {
      case '--url':
        if (value === '') throw new UsageError('--url needs a value')
        opts.url = value
        break
      case '--schema':
        if (!SCHEMA_RE.test(value)) {
          throw new UsageError(
            `--schema must be 1-63 characters of [A-Za-z0-9_], not starting with a digit (got ${JSON.stringify(value)})`,
          )
        }
        opts.schema = value
        break
      case '--sample-seconds':
        opts.sampleSeconds = parseInteger(flag, value, LIMITS.sampleSeconds)
        break
      case '--max-attempts':
        opts.maxAttempts = parseInteger(flag, value, LIMITS.maxAttempts)
        break
    }
  }
  if (opts.help) return { help: true }
  if (opts.url === undefined) throw new UsageError('--url is required (postgres://USER@HOST:PORT/DB)')
  return opts
}

module.exports = { parseDoctorArgs, UsageError, USAGE, DEFAULTS, LIMITS, SCHEMA_RE }
