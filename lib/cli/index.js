'use strict'

// The `steadfast` command line: `doctor` (lib/doctor/, plain SQL, no native addon) and the
// operator commands in ./commands, which reach the store only through the library's Client.

const { EXIT, UsageError, asCliError } = require('./errors')
const { parseCommandArgs, redactArg, urlSecretsOfArgv } = require('./args')
const { parseStoreUrl, openStore } = require('./store')
const { scrub } = require('./url')

const COMMANDS = {
  list: './commands/list',
  describe: './commands/describe',
  history: './commands/history',
  tree: './commands/tree',
  cancel: './commands/cancel',
  'dead-letters': './commands/dead-letters',
  console: './commands/console',
}

const USAGE = `Usage: steadfast <command> [options]

Commands:
  list          instances with their orchestration, status, execution and times
  describe      one instance: status, output or error, and its executions
  history       the history events of an execution
  tree          an instance and its sub-orchestrations, as a tree
  cancel        cancel a running instance (writes)
  dead-letters  list, show, requeue (writes) or purge (writes) dead letters; PostgreSQL only
  doctor        read-only health report of a steadfast or duroxide-pg schema
  console       serve the web console on 127.0.0.1 (read-only unless --allow-writes)

steadfast <command> --help shows a command's options.`

const DEFAULT_SCHEMA = 'steadfast'

const COMMON_OPTIONS = {
  url: { type: 'string' },
  schema: { type: 'string' },
  json: { type: 'boolean' },
}

const COMMON_HELP = `Common options:
  --url URL         the store, required: postgres://USER[:PASSWORD]@HOST[:PORT]/DB (or
                    postgresql://), or sqlite:PATH for an existing SQLite file. Leave the
                    password out to use PGPASSWORD or ~/.pgpass.
  --schema NAME     PostgreSQL schema (default: ${DEFAULT_SCHEMA}); it must exist at this
                    version: the command line never creates or migrates a schema
  --json            print one JSON document on stdout instead of text
  -h, --help        show this help

Exit status: 0 done; 1 not found (instance, execution, dead letter) or not done (nothing to
cancel, purge without --yes, still running after cancel --wait); 2 usage, connection, schema
or database error.`

/** Secrets this short would mask ordinary words in the store's data; messages mask them all. */
const MIN_OUTPUT_SECRET = 4

/**
 * Run one operator command: parse `argv` (the arguments after its name), open the store, run,
 * print, and resolve to the exit code. The URL's password is never printed.
 */
async function runCommand(command, argv, io) {
  let { secrets, display } = urlSecretsOfArgv(argv)
  let json = argv.includes('--json')
  const outputSecrets = () => secrets.filter((s) => s.length >= MIN_OUTPUT_SECRET)
  const fail = ({ code, message, exitCode }) => {
    const text = scrub(message, secrets, display)
    io.stderr.write(`steadfast ${command.name}: ${text}\n`)
    if (code === 'usage') io.stderr.write(`Run \`steadfast ${command.name} --help\` for usage.\n`)
    if (json) io.stdout.write(JSON.stringify({ error: { code, message: text } }, null, 2) + '\n')
    return exitCode
  }
  let values
  let target
  let opts
  try {
    const parsed = parseCommandArgs(argv, { options: { ...COMMON_OPTIONS, ...command.options }, maxPositionals: command.maxPositionals })
    values = parsed.values
    if (values.help) {
      io.stdout.write(`${command.usage}\n\n${COMMON_HELP}\n`)
      return EXIT.OK
    }
    json = values.json === true
    if (values.url === undefined) throw new UsageError('--url is required (postgres://USER@HOST:PORT/DB or sqlite:PATH)')
    target = parseStoreUrl(values.url)
    ;({ secrets, display } = target)
    if (target.kind === 'sqlite' && values.schema !== undefined) throw new UsageError('--schema applies to PostgreSQL only, not to a sqlite: store')
    opts = command.parse(values, parsed.positionals)
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    if (e.secrets) secrets = [...new Set([...secrets, ...e.secrets])]
    return fail(asCliError(e))
  }
  let store
  try {
    const schema = values.schema ?? DEFAULT_SCHEMA
    store = await openStore(target, schema, command.storeOptions?.(opts))
    // A long-running command (console) scrubs what it serves itself.
    const scrubbers = { scrubMessage: (t) => scrub(t, secrets, display), scrubValue: (t) => scrub(t, outputSecrets()) }
    const result = await command.run(store.client, opts, store, { io, schema, ...scrubbers })
    const shown = outputSecrets()
    const text = json
      ? JSON.stringify(result.json, (key, value) => (typeof value === 'string' ? scrub(value, shown) : value), 2) + '\n'
      : scrub(result.text, shown)
    io.stdout.write(text)
    return result.exitCode ?? EXIT.OK
  } catch (e) {
    return fail(asCliError(e))
  } finally {
    await store?.close().catch(() => {})
  }
}

/** The `steadfast` command: resolves to the process's exit code. */
async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const [name, ...rest] = argv
  if (name === undefined) {
    io.stderr.write(USAGE + '\n')
    return EXIT.ERROR
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(USAGE + '\n')
    return EXIT.OK
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(require('../../package.json').version + '\n')
    return EXIT.OK
  }
  if (name === 'doctor') return require('../doctor').doctorMain(rest, io)
  if (Object.hasOwn(COMMANDS, name)) return runCommand(require(COMMANDS[name]), rest, io)
  const shown = /^postgres(ql)?:/i.test(name) ? '<url>' : redactArg(name).slice(0, 40)
  io.stderr.write(`steadfast: unknown command ${JSON.stringify(shown)}\n\n${USAGE}\n`)
  return EXIT.ERROR
}

module.exports = { main, runCommand, COMMANDS }
