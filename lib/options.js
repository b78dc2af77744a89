'use strict'

// Validation of everything a user configures, before anything reaches Rust. Every error is a
// TypeError (wrong type, unknown key) or RangeError (out of range) whose message names the
// field and the rule. Defaults are documented in index.d.ts and mirrored in DEFAULTS.

const { typeError, rangeError, describe } = require('./errors')
const { checkText } = require('./text')

const DAY_MS = 86_400_000

/** Rules per field: kind, bounds, default (the default is documentation only: omitted
 *  fields are left to duroxide / steadfast-pg, whose defaults these are). */
const RUNTIME_FIELDS = {
  orchestrationConcurrency: { kind: 'int', min: 0, max: 1024, default: 2 },
  workerConcurrency: { kind: 'int', min: 0, max: 1024, default: 2 },
  dispatcherPollIntervalMs: { kind: 'int', min: 0, max: 60_000, default: 100 },
  dispatcherLongPollTimeoutMs: { kind: 'int', min: 0, max: 3_600_000, default: 30_000 },
  orchestratorLockTimeoutMs: { kind: 'int', min: 1, max: DAY_MS, default: 5_000 },
  orchestratorLockRenewalBufferMs: { kind: 'int', min: 0, max: DAY_MS, default: 2_000 },
  workerLockTimeoutMs: { kind: 'int', min: 1, max: DAY_MS, default: 30_000 },
  workerLockRenewalBufferMs: { kind: 'int', min: 0, max: DAY_MS, default: 5_000 },
  maxAttempts: { kind: 'int', min: 1, max: 1_000_000, default: 10 },
  unregisteredBackoffBaseMs: { kind: 'int', min: 0, max: DAY_MS, default: 1_000 },
  unregisteredBackoffMaxMs: { kind: 'int', min: 0, max: DAY_MS, default: 60_000 },
  activityCancellationGracePeriodMs: { kind: 'int', min: 0, max: DAY_MS, default: 10_000 },
  sessionLockTimeoutMs: { kind: 'int', min: 1, max: DAY_MS, default: 30_000 },
  sessionLockRenewalBufferMs: { kind: 'int', min: 0, max: DAY_MS, default: 5_000 },
  sessionIdleTimeoutMs: { kind: 'int', min: 1, max: DAY_MS, default: 300_000 },
  sessionCleanupIntervalMs: { kind: 'int', min: 1, max: DAY_MS, default: 300_000 },
  maxSessionsPerRuntime: { kind: 'int', min: 0, max: 100_000, default: 10 },
  workerNodeId: { kind: 'string', maxBytes: 256 },
  workerTagFilter: { kind: 'tagFilter' },
  logFormat: { kind: 'enum', values: ['json', 'pretty', 'compact'], default: 'pretty' },
  logLevel: { kind: 'enum', values: ['error', 'warn', 'info', 'debug', 'trace', 'off'], default: 'info' },
  serviceName: { kind: 'string', maxBytes: 256, default: 'duroxide' },
  serviceVersion: { kind: 'string', maxBytes: 256 },
  gaugePollIntervalMs: { kind: 'int', min: 1, max: DAY_MS, default: 60_000 },
  // the event-loop watch (both providers): 0 turns it off
  eventLoopStallMs: { kind: 'int', min: 0, max: DAY_MS, default: 10_000 },
  // steadfast-pg claim options (PostgreSQL only; ignored for SQLite)
  fetchFanout: { kind: 'int', min: 1, max: 1024, default: 8 },
  maxClaimAttempts: { kind: 'int', min: 1, max: 1024, default: 8 },
  maxClaimDurationMs: { kind: 'int', min: 1, max: 60_000, default: 2_000 },
  redeliveryBackoffBaseMs: { kind: 'int', min: 0, max: 3_600_000, default: 20 },
  redeliveryBackoffCapMs: { kind: 'int', min: 0, max: 3_600_000, default: 30_000 },
  redeliveryBackoffJitter: { kind: 'number', min: 0, max: 1, default: 0.2 },
  longPollRecheckMs: { kind: 'int', min: 10, max: 60_000, default: 250 },
  orphanTimeoutMs: { kind: 'int', min: 1, max: 30 * DAY_MS, default: 300_000 },
  maxTurnDurationMs: { kind: 'int', min: 100, max: DAY_MS, default: 300_000 },
  maxActivityDurationMs: { kind: 'int', min: 100, max: 7 * DAY_MS, default: 3_600_000 },
  maxBatchMessages: { kind: 'int', min: 1, max: 1_000_000, default: 1000 },
  maxHistoryEvents: { kind: 'int', min: 1, max: 100_000_000, default: 50_000 },
  maxHistoryBytes: { kind: 'int', min: 1024, max: 1_073_741_824, default: 52_428_800 },
}

const POSTGRES_FIELDS = {
  url: { kind: 'url' },
  schema: { kind: 'schema', default: 'steadfast' },
  maxConnections: { kind: 'int', min: 2, max: 1000, default: 10 },
  acquireTimeoutMs: { kind: 'int', min: 1, max: 600_000, default: 10_000 },
  statementLockTimeoutMs: { kind: 'int', min: 1, max: 600_000, default: 2_000 },
  statementTimeoutMs: { kind: 'int', min: 1, max: 3_600_000, default: 60_000 },
  polling: { kind: 'enum', values: ['listen', 'sessionFree'], default: 'listen' },
  runMigrations: { kind: 'boolean', default: true },
}

/** Dead-letter filters (Client.listDeadLetters / Client.purgeDeadLetters). */
const MAX_DEAD_LETTER_PAGE = 10_000
/** The latest time a JS Date can hold, ms since the epoch. */
const MAX_DATE_MS = 8_640_000_000_000_000

const DEAD_LETTER_LIST_FIELDS = {
  instanceId: { kind: 'text' },
  afterId: { kind: 'int', min: 0, max: Number.MAX_SAFE_INTEGER, default: 0 },
  limit: { kind: 'int', min: 1, max: MAX_DEAD_LETTER_PAGE, default: 100 },
}

const DEAD_LETTER_PURGE_FIELDS = {
  instanceId: { kind: 'text' },
  deadBeforeMs: { kind: 'int', min: 0, max: MAX_DATE_MS },
}

const MAX_WORKER_TAGS = 5
const MAX_TAG_NAME_BYTES = 256
/** Identifiers (instance ids, names, keys): PostgreSQL indexes them, so keep them short. */
const MAX_NAME_BYTES = 1024
/** Mirrors steadfast-pg's database_url rules (crates/steadfast-pg/src/database_url.rs). */
const MAX_DATABASE_URL_BYTES = 4096
const DATABASE_URL_PARAMETERS = [
  'sslmode', 'ssl-mode', 'sslrootcert', 'ssl-root-cert', 'ssl-ca', 'sslcert', 'ssl-cert', 'sslkey', 'ssl-key',
  'statement-cache-capacity', 'host', 'hostaddr', 'port', 'dbname', 'user', 'password', 'application_name', 'options',
]
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']
/** Schema names PostgreSQL owns besides pg_*. */
const RESERVED_SCHEMAS = ['information_schema']
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/

function levenshtein(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = cur
    }
  }
  return row[b.length]
}

/** The known key closest to `key`, if it is plausibly a typo. */
function closest(key, known) {
  let best
  let bestDistance = Infinity
  for (const k of known) {
    const d = levenshtein(key.toLowerCase(), k.toLowerCase())
    if (d < bestDistance) {
      best = k
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined
}

function describeValue(v) {
  if (v === null) return 'null'
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : `number ${v}`
  try {
    if (Array.isArray(v)) return 'an array'
  } catch {
    return 'a revoked Proxy'
  }
  return typeof v
}

/** Objects whose prototype is a root (Object.prototype of any realm) or null. */
function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}

function checkPlainObject(where, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${where} must be an object (got ${describeValue(value)})`)
  }
  let plain
  try {
    plain = isPlainObject(value)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${where} could not be read: ${describe(e)}`)
  }
  if (!plain) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${where} must be a plain object like { ... } (got an instance of a class)`)
  }
}

/**
 * Read an options object once: its own enumerable string keys (each must be in `fields`)
 * and their values, into a null-prototype copy. Getters run once, so what is checked is
 * what is used; inherited (e.g. polluted Object.prototype) properties are never read.
 */
function snapshot(where, value, fields) {
  checkPlainObject(where, value)
  let keys
  try {
    keys = Object.keys(value)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${where} could not be read: ${describe(e)}`)
  }
  checkKnownKeys(where, keys, fields)
  const out = Object.create(null)
  for (const key of keys) {
    try {
      out[key] = value[key]
    } catch (e) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${where}.${key} could not be read (its getter threw: ${describe(e)})`)
    }
  }
  return out
}

/** A string for Rust: well-formed UTF-16 (napi would turn lone surrogates into U+FFFD) without NUL. */
function checkString(name, value, maxBytes) {
  const problem = checkText(value, maxBytes)
  if (problem) throw problem.kind === 'size' ? rangeError(`${name} ${problem.rule}`) : typeError('ERR_INVALID_ARG_VALUE', `${name} ${problem.rule}`)
  return value
}

/** The rules of steadfast-pg's database_url; never echoes the value. */
function checkDatabaseUrl(name, value) {
  if (typeof value !== 'string') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a string (got ${typeof value})`)
  }
  const bytes = Buffer.byteLength(value)
  if (bytes === 0 || bytes > MAX_DATABASE_URL_BYTES) {
    throw rangeError(`${name} must be 1 to ${MAX_DATABASE_URL_BYTES} bytes long (got ${bytes} bytes; value not shown)`)
  }
  const control = CONTROL_CHARACTER.exec(value)
  if (control) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must not contain control characters (found one at index ${control.index}; value not shown)`)
  }
  if (/\p{Cs}/u.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be well-formed UTF-16 (it has a lone surrogate; value not shown)`)
  }
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must start with postgres:// or postgresql:// (value not shown)`)
  }
  let url
  try {
    url = new URL(value)
  } catch {
    // URL's own error carries the input; never rethrow it.
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} is not a valid URL (value not shown)`)
  }
  for (const [key, v] of url.searchParams) {
    const known = DATABASE_URL_PARAMETERS.includes(key) || /^options\[.+\]$/.test(key)
    if (!known) {
      const shown = /^[A-Za-z0-9_.\-[\]]{1,40}$/.test(key) ? `"${key}"` : '(name not shown)'
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `${name} has an unknown query parameter ${shown} (known: ${DATABASE_URL_PARAMETERS.join(', ')}, options[<setting>])`,
      )
    }
    if ((key === 'sslmode' || key === 'ssl-mode') && !SSL_MODES.includes(v)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${name} parameter ${key} must be one of ${SSL_MODES.join(', ')} (value not shown)`)
    }
  }
  return value
}

function checkField(where, field, rule, value) {
  const name = `${where}.${field}`
  switch (rule.kind) {
    case 'int':
    case 'number': {
      if (typeof value !== 'number') {
        throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a number (got ${describeValue(value)})`)
      }
      if (Number.isNaN(value) || !Number.isFinite(value)) {
        throw rangeError(`${name} must be a finite number (got ${describeValue(value)})`)
      }
      if (rule.kind === 'int' && !Number.isInteger(value)) {
        throw rangeError(`${name} must be an integer (got ${value})`)
      }
      if (value < rule.min || value > rule.max) {
        throw rangeError(`${name} must be between ${rule.min} and ${rule.max} (got ${value})`)
      }
      return value
    }
    case 'string': {
      if (typeof value !== 'string') {
        throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a string (got ${describeValue(value)})`)
      }
      const bytes = Buffer.byteLength(value)
      if (bytes === 0 || bytes > rule.maxBytes) {
        throw rangeError(`${name} must be 1 to ${rule.maxBytes} bytes long (got ${bytes})`)
      }
      return checkString(name, value, rule.maxBytes)
    }
    case 'text':
      return requireString(name, value)
    case 'boolean': {
      if (typeof value !== 'boolean') {
        throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a boolean (got ${describeValue(value)})`)
      }
      return value
    }
    case 'enum': {
      if (!rule.values.includes(value)) {
        const list = rule.values.map((v) => JSON.stringify(v)).join(', ')
        throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be one of ${list} (got ${describeValue(value)})`)
      }
      return value
    }
    case 'url':
      return checkDatabaseUrl(name, value)
    case 'schema': {
      if (typeof value !== 'string') {
        throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a string (got ${describeValue(value)})`)
      }
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value) || /^pg_/i.test(value)) {
        throw typeError(
          'ERR_INVALID_ARG_VALUE',
          `${name} must be 1-63 characters of [A-Za-z0-9_], not starting with a digit or "pg_" (got ${describeValue(value)})`,
        )
      }
      if (RESERVED_SCHEMAS.includes(value.toLowerCase())) {
        throw typeError('ERR_INVALID_ARG_VALUE', `${name} must not be one of ${RESERVED_SCHEMAS.join(', ')} (reserved by PostgreSQL)`)
      }
      return value
    }
    case 'tagFilter':
      return checkTagFilter(name, value)
    default:
      throw new Error(`internal: unknown rule kind ${rule.kind}`)
  }
}

function checkTags(name, tags) {
  if (!Array.isArray(tags)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be an array of strings (got ${describeValue(tags)})`)
  }
  if (tags.length < 1 || tags.length > MAX_WORKER_TAGS) {
    throw rangeError(`${name} must hold 1 to ${MAX_WORKER_TAGS} tags (got ${tags.length})`)
  }
  const out = []
  for (let i = 0; i < tags.length; i++) {
    const t = tags[i]
    if (typeof t !== 'string') {
      throw typeError('ERR_INVALID_ARG_TYPE', `${name} entries must be strings (got ${describeValue(t)})`)
    }
    const bytes = Buffer.byteLength(t)
    if (bytes === 0 || bytes > MAX_TAG_NAME_BYTES) {
      throw rangeError(`${name} entries must be 1 to ${MAX_TAG_NAME_BYTES} bytes long (got ${bytes})`)
    }
    out.push(checkString(`${name}[${i}]`, t, MAX_TAG_NAME_BYTES))
  }
  return out
}

/** → { workerTagFilter, workerTagFilterTags? } for the native options. */
function checkTagFilter(name, value) {
  if (typeof value === 'string') {
    if (!['defaultOnly', 'any', 'none'].includes(value)) {
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `${name} must be "defaultOnly", "any", "none", { tags: [...] } or { defaultAnd: [...] } (got ${describeValue(value)})`,
      )
    }
    return { workerTagFilter: value }
  }
  const filter = snapshot(name, value, { tags: {}, defaultAnd: {} })
  const keys = Object.keys(filter)
  if (keys.length !== 1) {
    throw typeError(
      'ERR_INVALID_ARG_VALUE',
      `${name} object must have exactly one key, "tags" or "defaultAnd" (got keys ${JSON.stringify(keys)})`,
    )
  }
  const key = keys[0]
  let tags = filter[key]
  try {
    // Copy once: a Proxy or getter-backed array could change between check and use.
    if (Array.isArray(tags)) tags = Array.from(tags)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name}.${key} could not be read: ${describe(e)}`)
  }
  return { workerTagFilter: key, workerTagFilterTags: checkTags(`${name}.${key}`, tags) }
}

function checkKnownKeys(where, keys, fields) {
  const known = Object.keys(fields)
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) {
      const hint = closest(key, known)
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `${where}.${key} is not a known option${hint ? ` (did you mean "${hint}"?)` : ''}`,
      )
    }
  }
}

/** Below this an ordinary busy moment of the event loop would count as a stall. */
const MIN_EVENT_LOOP_STALL_MS = 100

/** How often a running Runtime beats for the event-loop watch: a few beats per threshold. */
function heartbeatIntervalMs(nativeOptions) {
  const stall = effective(nativeOptions, 'eventLoopStallMs')
  return stall === 0 ? null : Math.max(25, Math.min(1000, Math.floor(stall / 4)))
}

/**
 * How long a step of a retried turn's orchestration code may run (lib/step-guard.js): half
 * the stall threshold, so the deadline fires before the watch; null when the watch is off.
 */
function retriedStepDeadlineMs(nativeOptions) {
  const stall = effective(nativeOptions, 'eventLoopStallMs')
  return stall === 0 ? null : Math.max(50, Math.floor(stall / 2))
}

function effective(values, field) {
  return values[field] !== undefined ? values[field] : RUNTIME_FIELDS[field].default
}

/**
 * Validate RuntimeOptions; returns the object passed to the native Runtime.
 * `undefined` values are treated as absent.
 */
function runtimeOptions(options) {
  const out = Object.create(null)
  if (options === undefined || options === null) return out
  const given = snapshot('options', options, RUNTIME_FIELDS)
  for (const [field, value] of Object.entries(given)) {
    if (value === undefined) continue
    const checked = checkField('options', field, RUNTIME_FIELDS[field], value)
    if (field === 'workerTagFilter') Object.assign(out, checked)
    else out[field] = checked
  }
  // Cross-field rules (duroxide would panic in start() on the session rule).
  const base = effective(out, 'unregisteredBackoffBaseMs')
  const max = effective(out, 'unregisteredBackoffMaxMs')
  if (base > max) {
    throw rangeError(`options.unregisteredBackoffBaseMs (${base}) must be at most options.unregisteredBackoffMaxMs (${max})`)
  }
  const rbase = effective(out, 'redeliveryBackoffBaseMs')
  const rcap = effective(out, 'redeliveryBackoffCapMs')
  if (rbase > rcap) {
    throw rangeError(`options.redeliveryBackoffBaseMs (${rbase}) must be at most options.redeliveryBackoffCapMs (${rcap})`)
  }
  const stall = effective(out, 'eventLoopStallMs')
  if (stall !== 0 && stall < MIN_EVENT_LOOP_STALL_MS) {
    throw rangeError(`options.eventLoopStallMs must be 0 (off) or at least ${MIN_EVENT_LOOP_STALL_MS} (got ${stall})`)
  }
  const lock = effective(out, 'workerLockTimeoutMs')
  const buffer = effective(out, 'workerLockRenewalBufferMs')
  const renewal = lock >= buffer ? lock - buffer : 1000
  const idle = effective(out, 'sessionIdleTimeoutMs')
  if (idle <= renewal) {
    throw rangeError(
      `options.sessionIdleTimeoutMs (${idle}) must be greater than options.workerLockTimeoutMs - options.workerLockRenewalBufferMs (${renewal})`,
    )
  }
  return out
}

/** Validate PostgresProvider.connectWithOptions input; returns the native options. */
function postgresOptions(options) {
  const given = snapshot('options', options, POSTGRES_FIELDS)
  if (given.url === undefined) {
    throw typeError('ERR_INVALID_ARG_TYPE', 'options.url is required')
  }
  const out = Object.create(null)
  for (const [field, value] of Object.entries(given)) {
    if (value === undefined) continue
    out[field] = checkField('options', field, POSTGRES_FIELDS[field], value)
  }
  return out
}

/** Validate a dead-letter filter against `fields`; `undefined` values are treated as absent. */
function deadLetterFilter(options, fields) {
  const out = Object.create(null)
  if (options === undefined) return out
  const given = snapshot('options', options, fields)
  for (const [field, value] of Object.entries(given)) {
    if (value === undefined) continue
    out[field] = checkField('options', field, fields[field], value)
  }
  return out
}

/** Validate Client.listDeadLetters options; returns them with defaults filled in. */
function deadLetterListOptions(options) {
  const out = deadLetterFilter(options, DEAD_LETTER_LIST_FIELDS)
  return {
    instanceId: out.instanceId,
    afterId: out.afterId ?? DEAD_LETTER_LIST_FIELDS.afterId.default,
    limit: out.limit ?? DEAD_LETTER_LIST_FIELDS.limit.default,
  }
}

/** Validate Client.purgeDeadLetters options. */
function deadLetterPurgeOptions(options) {
  return deadLetterFilter(options, DEAD_LETTER_PURGE_FIELDS)
}

/** A dead-letter id: a positive safe integer. */
function requireId(name, value) {
  if (typeof value !== 'number') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a number (got ${describeValue(value)})`)
  }
  if (!Number.isSafeInteger(value) || value < 1) {
    throw rangeError(`${name} must be a positive safe integer (got ${describeValue(value)})`)
  }
  return value
}

/** A non-empty identifier-like string: at most `maxBytes` UTF-8 bytes, no NUL, no lone surrogate. */
function requireString(name, value, maxBytes = MAX_NAME_BYTES) {
  if (typeof value !== 'string' || value.length === 0) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a non-empty string (got ${describeValue(value)})`)
  }
  return checkString(name, value, maxBytes)
}

function requireNonNegativeInt(name, value, max = 0xffff_ffff) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw rangeError(`${name} must be an integer between 0 and ${max} (got ${describeValue(value)})`)
  }
  return value
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

function requireSemver(name, value) {
  requireString(name, value)
  if (!SEMVER.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be a semantic version like "1.2.0" (got ${JSON.stringify(value)})`)
  }
  return value
}

module.exports = {
  RUNTIME_FIELDS,
  POSTGRES_FIELDS,
  DEAD_LETTER_LIST_FIELDS,
  DEAD_LETTER_PURGE_FIELDS,
  MAX_DEAD_LETTER_PAGE,
  MAX_WORKER_TAGS,
  MAX_TAG_NAME_BYTES,
  MAX_NAME_BYTES,
  MAX_DATABASE_URL_BYTES,
  DATABASE_URL_PARAMETERS,
  RESERVED_SCHEMAS,
  runtimeOptions,
  heartbeatIntervalMs,
  retriedStepDeadlineMs,
  postgresOptions,
  deadLetterListOptions,
  deadLetterPurgeOptions,
  requireId,
  requireString,
  requireNonNegativeInt,
  requireSemver,
  describeValue,
}
