'use strict'

// Command-line parsing shared by the `steadfast` commands: node:util's parseArgs in strict
// mode, with every error turned into a UsageError that names the flag and the rule.

const { parseArgs } = require('node:util')
const { UsageError } = require('./errors')
const { inspectUrl, urlSecrets } = require('./url')

/** Schema names as both providers accept them: a plain identifier, always quoted in SQL. */
const SCHEMA_RE = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

function parseInteger(flag, raw, { min, max }) {
  if (!/^[0-9]+$/.test(raw)) {
    throw new UsageError(`${flag} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw)})`)
  }
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be an integer between ${min} and ${max} (got ${raw})`)
  }
  return n
}

/** A stray argument may be a URL with a password: never echo it whole. */
function redactArg(arg) {
  return /^postgres(ql)?:\/\//i.test(arg) ? '<url>' : arg.length > 60 ? `${arg.slice(0, 57)}...` : arg
}

/**
 * The password of the `--url` in `argv` and its masked form, found before anything else is
 * parsed so that no usage error, whatever flag it is about, can echo the password.
 */
function urlSecretsOfArgv(argv) {
  const i = argv.findIndex((a) => a === '--url' || a.startsWith('--url='))
  const raw = i < 0 ? undefined : argv[i].startsWith('--url=') ? argv[i].slice(6) : argv[i + 1]
  if (!raw) return { secrets: [], display: '<url>' }
  try {
    const { secrets, display } = inspectUrl(raw)
    return { secrets, display }
  } catch {
    return { secrets: urlSecrets(raw), display: '<url>' }
  }
}

/** Why parseArgs refused `argv`, in the words of the doctor's parser: the flag and the rule. */
function explainRefusal(argv, options, error) {
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true })
  for (const t of tokens) {
    if (t.kind !== 'option') continue
    const spec = options[t.name]
    if (!spec) return new UsageError(`unknown option ${t.rawName} (see --help)`)
    if (spec.type === 'boolean' && t.value !== undefined) return new UsageError(`--${t.name} takes no value`)
    if (spec.type === 'string' && t.value === undefined) return new UsageError(`--${t.name} needs a value`)
    if (spec.type === 'string' && !t.inlineValue && t.value.startsWith('--')) return new UsageError(`--${t.name} needs a value`)
    if (spec.type === 'string' && !t.inlineValue && t.value.startsWith('-')) {
      return new UsageError(`--${t.name} needs a value (write --${t.name}=VALUE for one that starts with "-")`)
    }
  }
  return new UsageError(error.message)
}

/**
 * Parse `argv` against `options` (parseArgs option specs; `-h`/`--help` is added) allowing at
 * most `maxPositionals` positional arguments. A flag given twice is refused rather than the
 * last one silently winning. Returns `{ values, positionals }`.
 */
function parseCommandArgs(argv, { options, maxPositionals = 0 }) {
  const spec = { ...options, help: { type: 'boolean', short: 'h' } }
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: true, tokens: true })
  } catch (e) {
    if (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS_')) throw explainRefusal(argv, spec, e)
    throw e
  }
  const seen = new Set()
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue
    if (seen.has(t.name)) throw new UsageError(`--${t.name} given more than once`)
    seen.add(t.name)
  }
  if (parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals[maxPositionals]
    throw new UsageError(`unexpected argument ${JSON.stringify(redactArg(extra))} (see --help)`)
  }
  return { values: parsed.values, positionals: parsed.positionals }
}

/** The positional argument at `index`, named `name` in the error when it is missing or empty. */
function requiredPositional(positionals, index, name) {
  const value = positionals[index]
  if (value === undefined || value === '') throw new UsageError(`${name} is required (see --help)`)
  return value
}

/** `raw` if it is one of `allowed` (any case), in the spelling of `allowed`. */
function parseChoice(flag, raw, allowed) {
  const found = allowed.find((a) => a.toLowerCase() === raw.toLowerCase())
  if (found === undefined) throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(redactArg(raw))})`)
  return found
}

/** The arguments of a command that takes one instance id and no options of its own. */
const INSTANCE_ID_ONLY = Object.freeze({
  options: {},
  maxPositionals: 1,
  parse(values, positionals) {
    return { id: requiredPositional(positionals, 0, 'ID') }
  },
})

module.exports = {
  INSTANCE_ID_ONLY,
  SCHEMA_RE,
  parseInteger,
  parseChoice,
  redactArg,
  urlSecretsOfArgv,
  parseCommandArgs,
  requiredPositional,
}
