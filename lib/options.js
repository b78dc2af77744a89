'use strict'

// Applies the option tables (lib/option-tables.js) to what a user passes, before anything
// reaches Rust: each option is checked by its kind with the primitives of lib/args.js, and
// the result is a null-prototype copy holding only the options given.

const { typeError, rangeError } = require('./errors')
const args = require('./args')
const { checkDatabaseUrl, checkSchema } = require('./database-url')
const { requireOrchestrationReference } = require('./refs')
const { requireLogger } = require('./logger')
const tables = require('./option-tables')

const { RUNTIME_FIELDS, POSTGRES_FIELDS, DEAD_LETTER_LIST_FIELDS, DEAD_LETTER_PURGE_FIELDS, BACKOFFS } = tables
/** Every key a backoff object may have, whatever its kind. */
const BACKOFF_KEYS = Object.assign({ kind: {} }, ...Object.values(BACKOFFS).map((b) => b.fields))

/** One option's value against its rule (see option-tables.js); returns what is passed on. */
function checkField(name, rule, value) {
  switch (rule.kind) {
    case 'int':
      return args.integer(name, value, rule.min, rule.max)
    case 'number':
      return args.number(name, value, rule.min, rule.max)
    case 'string':
      return args.requireString(name, value, rule.maxBytes)
    case 'boolean':
      return args.requireBoolean(name, value)
    case 'enum':
      return args.oneOf(name, value, rule.values)
    case 'semver':
      return args.requireSemver(name, value)
    case 'url':
      return checkDatabaseUrl(name, value)
    case 'schema':
      return checkSchema(name, value)
    case 'tagFilter':
      return checkTagFilter(name, value)
    case 'instanceIds':
      return args
        .requireArray(name, value, 0, rule.max, 'instance ids')
        .map((id, i) => args.requireString(`${name}[${i}]`, id, tables.MAX_INSTANCE_ID_BYTES))
    case 'abortSignal':
      return args.requireInstance(name, value, AbortSignal, 'an AbortSignal')
    case 'orchestrationRef':
      return requireOrchestrationReference(name, value)
    case 'backoff':
      return checkBackoff(name, value)
    case 'logger':
      return requireLogger(name, value)
    case 'tokenSource':
      if (typeof value !== 'function') {
        throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a function returning a token (got ${args.describeValue(value)})`)
      }
      return value
    default:
      throw new Error(`internal: unknown option kind ${rule.kind}`)
  }
}

/** `{ mode, tags? }`: `mode` is a string form or the key of the object form. */
function checkTagFilter(name, value) {
  if (typeof value === 'string') {
    if (!tables.TAG_FILTER_MODES.includes(value)) {
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `${name} must be "defaultOnly", "any", "none", { tags: [...] } or { defaultAnd: [...] } (got ${args.describeValue(value)})`,
      )
    }
    return { mode: value }
  }
  const filter = args.readOptions(name, value, { tags: {}, defaultAnd: {} })
  const keys = Object.keys(filter)
  if (keys.length !== 1) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} object must have exactly one key, "tags" or "defaultAnd" (got keys ${JSON.stringify(keys)})`)
  }
  const mode = keys[0]
  const tags = args.requireArray(`${name}.${mode}`, filter[mode], 1, tables.MAX_WORKER_TAGS, 'tags')
  return { mode, tags: tags.map((tag, i) => args.requireString(`${name}.${mode}[${i}]`, tag, tables.MAX_TAG_NAME_BYTES)) }
}

/** A backoff name, or `{ kind, ...parameters }`; returns the full parameters of that kind. */
function checkBackoff(name, value) {
  const kinds = Object.keys(BACKOFFS)
  if (typeof value === 'string') return { kind: args.oneOf(name, value, kinds), ...BACKOFFS[value].defaults }
  const { kind, ...parameters } = args.readOptions(name, value, BACKOFF_KEYS)
  args.oneOf(`${name}.kind`, kind, kinds)
  return { kind, ...BACKOFFS[kind].defaults, ...applyTable(name, parameters, BACKOFFS[kind].fields) }
}

/**
 * Check an options object against `table`; returns the options given, checked, in a
 * null-prototype object. `undefined` values count as absent.
 */
function applyTable(name, value, table) {
  const given = args.readOptions(name, value, table)
  for (const [field, rule] of Object.entries(table)) {
    if (rule.required && given[field] === undefined) throw typeError('ERR_INVALID_ARG_TYPE', `${name}.${field} is required`)
  }
  const out = Object.create(null)
  for (const [field, v] of Object.entries(given)) {
    if (v !== undefined) out[field] = checkField(`${name}.${field}`, table[field], v)
  }
  checkRelations(name, table, out)
  return out
}

/** The rules that look past one option's bounds, on effective values (given, else default). */
function checkRelations(name, table, out) {
  for (const [field, rule] of Object.entries(table)) {
    if (rule.atMost === undefined) continue
    const v = effective(out, table, field)
    const cap = effective(out, table, rule.atMost)
    if (v > cap) throw rangeError(`${name}.${field} (${v}) must be at most ${name}.${rule.atMost} (${cap})`)
  }
  for (const [field, rule] of Object.entries(table)) {
    const v = effective(out, table, field)
    if (rule.offOrAtLeast !== undefined && v !== 0 && v < rule.offOrAtLeast) {
      throw rangeError(`${name}.${field} must be 0 (off) or at least ${rule.offOrAtLeast} (got ${v})`)
    }
  }
}

/** As applyTable, but an absent options object is no options. */
function applyOptionalTable(name, value, table) {
  return value === undefined ? Object.create(null) : applyTable(name, value, table)
}

function effective(values, table, field) {
  return values[field] !== undefined ? values[field] : table[field].default
}

/**
 * Validate RuntimeOptions (`undefined` or `null`: none); returns the object passed to the
 * native Runtime.
 */
function runtimeOptions(options) {
  const out = applyOptionalTable('options', options ?? undefined, RUNTIME_FIELDS)
  // duroxide's start() would panic on this one.
  const lock = effective(out, RUNTIME_FIELDS, 'workerLockTimeoutMs')
  const buffer = effective(out, RUNTIME_FIELDS, 'workerLockRenewalBufferMs')
  const renewal = lock >= buffer ? lock - buffer : 1000
  const idle = effective(out, RUNTIME_FIELDS, 'sessionIdleTimeoutMs')
  if (idle <= renewal) {
    throw rangeError(
      `options.sessionIdleTimeoutMs (${idle}) must be greater than options.workerLockTimeoutMs - options.workerLockRenewalBufferMs (${renewal})`,
    )
  }
  if (out.workerTagFilter !== undefined) {
    const { mode, tags } = out.workerTagFilter
    out.workerTagFilter = mode
    if (tags) out.workerTagFilterTags = tags
  }
  return out
}

/** How often a running Runtime beats for the event-loop watch: a few beats per threshold. */
function heartbeatIntervalMs(nativeOptions) {
  const stall = effective(nativeOptions, RUNTIME_FIELDS, 'eventLoopStallMs')
  return stall === 0 ? null : Math.max(25, Math.min(1000, Math.floor(stall / 4)))
}

/**
 * How long a step of a retried turn's orchestration code may run (lib/step-guard.js): half
 * the stall threshold, so the deadline fires before the watch; null when the watch is off.
 */
function retriedStepDeadlineMs(nativeOptions) {
  const stall = effective(nativeOptions, RUNTIME_FIELDS, 'eventLoopStallMs')
  return stall === 0 ? null : Math.max(50, Math.floor(stall / 2))
}

/** Validate PostgresProvider.connectWithOptions input; returns the native options. */
function postgresOptions(options) {
  return applyTable('options', options, POSTGRES_FIELDS)
}

/** Validate the Entra connect options; returns them with defaults filled in. */
function entraOptions(options) {
  const out = applyOptionalTable('options', options, tables.ENTRA_FIELDS)
  const filled = { ...out }
  for (const field of ['audience', 'acquireTimeoutMs', 'refreshIntervalMs', 'sslMode']) filled[field] = effective(out, tables.ENTRA_FIELDS, field)
  return filled
}

/** Validate Client.listDeadLetters options; returns them with defaults filled in. */
function deadLetterListOptions(options) {
  const out = applyOptionalTable('options', options, DEAD_LETTER_LIST_FIELDS)
  return {
    instanceId: out.instanceId,
    afterId: effective(out, DEAD_LETTER_LIST_FIELDS, 'afterId'),
    limit: effective(out, DEAD_LETTER_LIST_FIELDS, 'limit'),
  }
}

/** Validate Client.listInstances options; returns them with the page size filled in. */
function listInstancesOptions(options) {
  const out = applyOptionalTable('options', options, tables.LIST_INSTANCES_FIELDS)
  return { ...out, limit: effective(out, tables.LIST_INSTANCES_FIELDS, 'limit') }
}

/**
 * Validate the last argument of Client.startOrchestration and startOrchestrationVersioned
 * (and so of their *Typed aliases); returns it with `ifExists` filled in.
 */
function startOptions(options) {
  const out = applyOptionalTable('options', options, tables.START_FIELDS)
  return { ...out, ifExists: effective(out, tables.START_FIELDS, 'ifExists') }
}

/** Validate Client.purgeDeadLetters options. */
function deadLetterPurgeOptions(options) {
  return applyOptionalTable('options', options, DEAD_LETTER_PURGE_FIELDS)
}

module.exports = {
  entraOptions,
  RUNTIME_FIELDS,
  POSTGRES_FIELDS,
  MAX_DEAD_LETTER_PAGE: tables.MAX_DEAD_LETTER_PAGE,
  checkField,
  applyTable,
  applyOptionalTable,
  runtimeOptions,
  heartbeatIntervalMs,
  retriedStepDeadlineMs,
  postgresOptions,
  deadLetterListOptions,
  deadLetterPurgeOptions,
  listInstancesOptions,
  startOptions,
}
