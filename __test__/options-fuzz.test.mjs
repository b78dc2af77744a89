// Option fuzzing: hundreds of generated RuntimeOptions and PostgreSQL connect options
// (deterministic seed, STEADFAST_FUZZ_SEED) checked against an independent model of the
// rules; hostile objects (throwing getters, Proxies, prototype pollution, odd prototypes);
// bad database URLs and schemas that must never reach the network nor leak the password;
// and claim options on a real PostgreSQL runtime.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { steadfast, DATABASE_URL, FAST, uid, pgSchema } from './helpers.mjs'
import { SEED, rng, hostileValues, fakeServer, echoPasswordServer, assertNoSecret } from './fuzz-support.mjs'

const require = createRequire(import.meta.url)
const { RUNTIME_FIELDS, POSTGRES_FIELDS } = require('../lib/options.js')
const native = require('../lib/native.js')
const { Runtime, Client, SqliteProvider, PostgresProvider, SteadfastError } = steadfast

const DAY = 86_400_000
const CASES = Number(process.env.STEADFAST_FUZZ_CASES ?? 400)

// ---- the model: what each field accepts, written independently of lib/options.js ----

const int = (min, max) => ({ kind: 'int', min, max })
const MODEL = {
  orchestrationConcurrency: int(0, 1024),
  workerConcurrency: int(0, 1024),
  dispatcherPollIntervalMs: int(0, 60_000),
  dispatcherLongPollTimeoutMs: int(0, 3_600_000),
  orchestratorLockTimeoutMs: int(1, DAY),
  orchestratorLockRenewalBufferMs: int(0, DAY),
  workerLockTimeoutMs: int(1, DAY),
  workerLockRenewalBufferMs: int(0, DAY),
  maxAttempts: int(1, 1_000_000),
  unregisteredBackoffBaseMs: int(0, DAY),
  unregisteredBackoffMaxMs: int(0, DAY),
  activityCancellationGracePeriodMs: int(0, DAY),
  sessionLockTimeoutMs: int(1, DAY),
  sessionLockRenewalBufferMs: int(0, DAY),
  sessionIdleTimeoutMs: int(1, DAY),
  sessionCleanupIntervalMs: int(1, DAY),
  maxSessionsPerRuntime: int(0, 100_000),
  workerNodeId: { kind: 'string', maxBytes: 256 },
  workerTagFilter: { kind: 'tagFilter' },
  logFormat: { kind: 'enum', values: ['json', 'pretty', 'compact'] },
  logLevel: { kind: 'enum', values: ['error', 'warn', 'info', 'debug', 'trace', 'off'] },
  // Checked as a string here; its directive syntax is the native layer's (ERR_STEADFAST_INVALID_OPTIONS).
  logFilter: { kind: 'string', maxBytes: 4096, valid: ['warn', 'steadfast_pg=info', 'warn,duroxide::orchestration=debug'] },
  logger: { kind: 'logger' },
  serviceName: { kind: 'string', maxBytes: 256 },
  serviceVersion: { kind: 'string', maxBytes: 256 },
  gaugePollIntervalMs: int(1, DAY),
  eventLoopStallMs: int(0, DAY),
  fetchFanout: int(1, 1024),
  maxClaimAttempts: int(1, 1024),
  maxClaimDurationMs: int(1, 60_000),
  redeliveryBackoffBaseMs: int(0, 3_600_000),
  redeliveryBackoffCapMs: int(0, 3_600_000),
  redeliveryBackoffJitter: { kind: 'number', min: 0, max: 1 },
  longPollRecheckMs: int(10, 60_000),
  orphanTimeoutMs: int(1, 30 * 86_400_000),
  maxTurnDurationMs: int(100, 86_400_000),
  maxActivityDurationMs: int(100, 7 * 86_400_000),
  maxBatchMessages: int(1, 1_000_000),
  maxHistoryEvents: int(1, 100_000_000),
  maxHistoryBytes: int(1024, 1_073_741_824),
}
const CLAIM_FIELDS = ['fetchFanout', 'maxClaimAttempts', 'maxClaimDurationMs', 'redeliveryBackoffBaseMs', 'redeliveryBackoffCapMs', 'redeliveryBackoffJitter', 'longPollRecheckMs', 'orphanTimeoutMs', 'maxTurnDurationMs', 'maxActivityDurationMs', 'maxBatchMessages', 'maxHistoryEvents', 'maxHistoryBytes']
const DEFAULTS = { unregisteredBackoffBaseMs: 1000, unregisteredBackoffMaxMs: 60_000, redeliveryBackoffBaseMs: 20, redeliveryBackoffCapMs: 30_000, workerLockTimeoutMs: 30_000, workerLockRenewalBufferMs: 5000, sessionIdleTimeoutMs: 300_000, eventLoopStallMs: 10_000 }

const PG_MODEL = {
  schema: { kind: 'schema' },
  maxConnections: int(2, 1000),
  acquireTimeoutMs: int(1, 600_000),
  statementLockTimeoutMs: int(1, 600_000),
  statementTimeoutMs: int(1, 3_600_000),
  polling: { kind: 'enum', values: ['listen', 'sessionFree'] },
  runMigrations: { kind: 'boolean' },
}

const TYPE = TypeError
const RANGE = RangeError
const utf8 = (s) => Buffer.byteLength(s)
const wellFormed = (s) => !/\p{Cs}/u.test(s)

/** null when `value` is valid for `spec`, else [ErrorClass, rule pattern]. */
function expectField(spec, value) {
  switch (spec.kind) {
    case 'int':
    case 'number':
      if (typeof value !== 'number') return [TYPE, /must be a number/]
      if (!Number.isFinite(value)) return [RANGE, /must be a finite number/]
      if (spec.kind === 'int' && !Number.isInteger(value)) return [RANGE, /must be an integer/]
      if (value < spec.min || value > spec.max) return [RANGE, new RegExp(`must be between ${spec.min} and ${spec.max}`)]
      return null
    case 'string':
      if (typeof value !== 'string' || value === '') return [TYPE, /must be a non-empty string/]
      if (utf8(value) > spec.maxBytes) return [RANGE, new RegExp(`must be at most ${spec.maxBytes} bytes as UTF-8`)]
      if (value.includes('\0')) return [TYPE, /must not contain NUL/]
      if (!wellFormed(value)) return [TYPE, /well-formed UTF-16/]
      return null
    case 'enum':
      return spec.values.includes(value) ? null : [TYPE, /must be one of/]
    case 'boolean':
      return typeof value === 'boolean' ? null : [TYPE, /must be a boolean/]
    case 'logger': {
      if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return [TYPE, /must be an object with debug, info, warn, error methods/]
      const missing = ['debug', 'info', 'warn', 'error'].filter((m) => typeof value[m] !== 'function')
      return missing.length === 0 ? null : [TYPE, /must have debug, info, warn, error methods \(missing/]
    }
    case 'schema':
      if (typeof value !== 'string') return [TYPE, /must be a string/]
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value) || /^pg_/i.test(value)) return [TYPE, /1-63 characters of \[A-Za-z0-9_\]/]
      if (value.toLowerCase() === 'information_schema') return [TYPE, /reserved by PostgreSQL/]
      return null
    case 'tagFilter': {
      if (typeof value === 'string') return ['defaultOnly', 'any', 'none'].includes(value) ? null : [TYPE, /must be "defaultOnly"/]
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [TYPE, /must be an object/]
      if (Object.getPrototypeOf(Object.getPrototypeOf(value) ?? Object.prototype) !== null) return [TYPE, /plain object/]
      const keys = Object.keys(value)
      const unknown = keys.find((k) => k !== 'tags' && k !== 'defaultAnd')
      if (unknown) return [TYPE, /is not a known option/]
      if (keys.length !== 1) return [TYPE, /exactly one key/]
      const tags = value[keys[0]]
      if (!Array.isArray(tags)) return [TYPE, /must be an array of tags/]
      if (tags.length < 1 || tags.length > 5) return [RANGE, /must hold 1 to 5 tags/]
      for (const t of tags) {
        if (typeof t !== 'string' || t === '') return [TYPE, /\]\s*must be a non-empty string/]
        if (utf8(t) > 256) return [RANGE, /\] must be at most 256 bytes as UTF-8/]
        if (t.includes('\0')) return [TYPE, /NUL/]
        if (!wellFormed(t)) return [TYPE, /well-formed/]
      }
      return null
    }
    default:
      throw new Error(`model: unknown kind ${spec.kind}`)
  }
}

/** Expected outcome of new Runtime(provider, options): null or [Class, pattern, field]. */
function expectRuntime(options) {
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(MODEL, key)) return [TYPE, /is not a known option/, key]
  }
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue
    const e = expectField(MODEL[key], value)
    if (e) return [...e, key]
  }
  const eff = (k) => options[k] ?? DEFAULTS[k]
  if (eff('unregisteredBackoffBaseMs') > eff('unregisteredBackoffMaxMs')) return [RANGE, /must be at most options\.unregisteredBackoffMaxMs/, 'unregisteredBackoffBaseMs']
  if (eff('redeliveryBackoffBaseMs') > eff('redeliveryBackoffCapMs')) return [RANGE, /must be at most options\.redeliveryBackoffCapMs/, 'redeliveryBackoffBaseMs']
  const stall = eff('eventLoopStallMs')
  if (stall !== 0 && stall < 100) return [RANGE, /must be 0 \(off\) or at least 100/, 'eventLoopStallMs']
  const lock = eff('workerLockTimeoutMs')
  const buffer = eff('workerLockRenewalBufferMs')
  const renewal = lock >= buffer ? lock - buffer : 1000
  if (eff('sessionIdleTimeoutMs') <= renewal) return [RANGE, /must be greater than options\.workerLockTimeoutMs/, 'sessionIdleTimeoutMs']
  return null
}

function validValue(r, spec) {
  switch (spec.kind) {
    case 'int': {
      const edge = r.pick([spec.min, spec.max, spec.min + 1])
      return r.chance(0.3) ? Math.min(edge, spec.max) : r.int(spec.min, Math.min(spec.max, spec.min + 100_000))
    }
    case 'number':
      return r.pick([spec.min, spec.max, r.next() * spec.max])
    case 'string':
      return r.pick(spec.valid ?? ['node-a', 'é', '😀 emoji', 'x'.repeat(256), 'a b'])
    case 'logger':
      return { debug() {}, info() {}, warn() {}, error() {} }
    case 'enum':
      return r.pick(spec.values)
    case 'boolean':
      return r.chance(0.5)
    case 'tagFilter':
      return r.pick(['defaultOnly', 'any', 'none', { tags: ['gpu'] }, { defaultAnd: ['a', 'b', 'c', 'd', 'e'] }])
    case 'schema':
      return r.pick(['steadfast', '_x', 'A1_b', 'a'.repeat(63)])
    default:
      throw new Error(spec.kind)
  }
}

function badValue(r, spec) {
  const values = hostileValues().map(([, v]) => v)
  if (spec.kind === 'tagFilter') {
    values.push('all', { tags: [] }, { tags: 'gpu' }, { tags: ['a', 'b', 'c', 'd', 'e', 'f'] }, { tags: [''] }, { tags: [1] }, { tags: ['\ud800'] }, { tags: ['a'], defaultAnd: ['b'] }, { tag: ['a'] }, new Map())
  }
  if (spec.kind === 'schema') values.push('pg_x', 'PG_CATALOG', 'information_schema', '1a', 'a;b', 'a"b', 'a'.repeat(64), 'a.b', 'a-b')
  if (spec.kind === 'int') values.push(spec.min - 1, spec.max + 1, spec.min + 0.5)
  if (spec.kind === 'number') values.push(spec.min - 0.001, spec.max + 0.001)
  return r.pick(values)
}

/** A one-edit typo of `word`. */
function typo(r, word) {
  const i = r.int(0, word.length - 1)
  return r.pick([word.slice(0, i) + word.slice(i + 1), word.slice(0, i) + word[i] + word.slice(i), word.toLowerCase() === word ? `${word}s` : word.toLowerCase()])
}

function checkOutcome(expected, run, label) {
  if (!expected) {
    try {
      run()
    } catch (e) {
      assert.fail(`${label}: expected acceptance, got ${e.name}: ${e.message}`)
    }
    return
  }
  const [Class, pattern, field] = expected
  assert.throws(run, (e) => {
    assert.ok(e instanceof Class, `${label}: expected ${Class.name}, got ${e.name}: ${e.message}`)
    assert.match(e.message, pattern, label)
    assert.ok(e.message.includes(`options.${field}`), `${label}: message does not name options.${field}: ${e.message}`)
    assert.match(e.code, /^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE|OUT_OF_RANGE)$/, label)
    return true
  })
}

function describeCase(options) {
  return JSON.stringify(options, (_k, v) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'symbol' || typeof v === 'function' ? String(v) : Number.isNaN(v) ? 'NaN' : v === Infinity ? 'Infinity' : v === -Infinity ? '-Infinity' : v))
}

let sqlite
before(async () => {
  sqlite = await SqliteProvider.inMemory()
})

test('the model covers exactly the fields lib/options.js knows', () => {
  assert.deepEqual(Object.keys(MODEL).sort(), Object.keys(RUNTIME_FIELDS).sort())
  assert.deepEqual(['url', ...Object.keys(PG_MODEL)].sort(), Object.keys(POSTGRES_FIELDS).sort())
})

test(`generated RuntimeOptions (seed ${SEED}, ${CASES} cases) match the model`, () => {
  const r = rng(SEED)
  const fields = Object.keys(MODEL)
  const tally = { accepted: 0, TypeError: 0, RangeError: 0 }
  for (let n = 0; n < CASES; n++) {
    const options = {}
    for (const f of fields) if (r.chance(0.25)) options[f] = validValue(r, MODEL[f])
    const mode = r.next()
    if (mode < 0.6) {
      const f = r.pick(fields)
      options[f] = badValue(r, MODEL[f])
    } else if (mode < 0.7) {
      options[typo(r, r.pick(fields))] = 1
    } else if (mode < 0.75) {
      // Own keys named like Object.prototype members (JSON.parse creates such keys).
      const key = r.pick(['__proto__', 'constructor', 'toString', 'hasOwnProperty', ''])
      Object.defineProperty(options, key, { value: { maxAttempts: 1 }, enumerable: true, configurable: true, writable: true })
    }
    const expected = expectRuntime(options)
    tally[expected ? expected[0].name : 'accepted']++
    checkOutcome(expected, () => new Runtime(sqlite, options), `seed ${SEED} case ${n} ${describeCase(options)}`)
  }
  // The generator must exercise every outcome, or the test proves little.
  for (const [k, v] of Object.entries(tally)) assert.ok(v >= CASES / 20, `too few ${k} cases: ${JSON.stringify(tally)}`)
})

test('every field x every hostile value: TypeError/RangeError naming the field, or accepted per the model', () => {
  for (const [field, spec] of Object.entries(MODEL)) {
    for (const [name, value] of hostileValues()) {
      const options = { [field]: value }
      checkOutcome(expectRuntime(options), () => new Runtime(sqlite, options), `${field} = ${name}`)
    }
  }
})

test('hostile objects: throwing getters, Proxies, odd prototypes', () => {
  const named = (pattern) => (e) => {
    assert.ok(e instanceof TypeError, `${e.name}: ${e.message}`)
    assert.match(e.message, pattern)
    return true
  }
  const throwing = { get maxAttempts() { throw new Error('getter boom') } }
  assert.throws(() => new Runtime(sqlite, throwing), named(/options\.maxAttempts could not be read \(its getter threw: getter boom\)/))
  // A getter is read exactly once: what is checked is what is used.
  let reads = 0
  const flipping = { get maxAttempts() { reads++; return reads === 1 ? 3 : -1 } }
  new Runtime(sqlite, flipping)
  assert.equal(reads, 1)
  const ownKeysThrows = new Proxy({}, { ownKeys() { throw new Error('trap boom') } })
  assert.throws(() => new Runtime(sqlite, ownKeysThrows), named(/options could not be read: trap boom/))
  const protoThrows = new Proxy({}, { getPrototypeOf() { throw new Error('proto boom') } })
  assert.throws(() => new Runtime(sqlite, protoThrows), named(/options could not be read: proto boom/))
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  assert.throws(() => new Runtime(sqlite, proxy), TypeError)
  new Runtime(sqlite, new Proxy({ maxAttempts: 2 }, {}))
  assert.throws(() => new Runtime(sqlite, new Proxy({ maxAttempts: 0 }, {})), /options\.maxAttempts must be between 1 and 1000000/)
  // Own "__proto__" / "constructor" keys are unknown options, never prototype changes.
  assert.throws(() => new Runtime(sqlite, JSON.parse('{"__proto__": {"maxAttempts": 0}}')), named(/options\.__proto__ is not a known option/))
  assert.throws(() => new Runtime(sqlite, { constructor: 1 }), named(/options\.constructor is not a known option/))
  // Inherited options are refused (a prototype is not an options object), not silently read.
  assert.throws(() => new Runtime(sqlite, Object.create({ maxAttempts: 0 })), named(/plain object/))
  for (const odd of [new Map([['maxAttempts', 1]]), new Date(), new (class Options { maxAttempts = 1 })(), Object(1)]) {
    assert.throws(() => new Runtime(sqlite, odd), named(/options must be (a plain object|an object)/))
  }
  for (const notObject of ['fast', 1, true, 10n, Symbol('s'), () => ({}), []]) {
    assert.throws(() => new Runtime(sqlite, notObject), named(/options must be an object/))
  }
  // Frozen and null-prototype objects are ordinary option objects.
  new Runtime(sqlite, Object.freeze({ maxAttempts: 2, workerTagFilter: Object.freeze({ tags: Object.freeze(['a']) }) }))
  assert.throws(() => new Runtime(sqlite, Object.freeze({ maxAttempts: -1 })), RangeError)
  new Runtime(sqlite, Object.assign(Object.create(null), { maxAttempts: 2 }))
  // Symbol keys are not options and are ignored.
  new Runtime(sqlite, { [Symbol('maxAttempts')]: 'x' })
  // Tag arrays are copied once, so a Proxy cannot change them after the check.
  let tagReads = 0
  const tags = new Proxy(['a'], { get(t, k) { if (k === '0') tagReads++; return k === '0' && tagReads > 1 ? 42 : t[k] } })
  new Runtime(sqlite, { workerTagFilter: { tags } })
})

test('a polluted Object.prototype never leaks into the options', async () => {
  const polluted = { workerConcurrency: 'lots', maxAttempts: 0, url: 'postgres://u:Polluted-1@127.0.0.1:1/x', schema: 'pg_bad' }
  try {
    Object.assign(Object.prototype, polluted)
    // Without null-prototype copies the native layer would read these inherited values.
    new Runtime(sqlite, {})
    new Runtime(sqlite, { maxAttempts: 3 })
    await assert.rejects(PostgresProvider.connectWithOptions({ schema: 'x' }), /options\.url is required/)
  } finally {
    for (const k of Object.keys(polluted)) delete Object.prototype[k]
  }
})

// ---- PostgreSQL connect options: nothing may reach the network when they are bad ----

test(`generated PostgreSQL connect options (seed ${SEED}) are refused before connecting`, async () => {
  const server = await fakeServer()
  try {
    const r = rng(SEED + 1)
    const fields = Object.keys(PG_MODEL)
    const url = `postgres://fuzz:PgFuzz-Secret@127.0.0.1:${server.port}/db`
    let checked = 0
    for (let n = 0; n < CASES / 2; n++) {
      const options = { url }
      for (const f of fields) if (r.chance(0.4)) options[f] = validValue(r, PG_MODEL[f])
      let field = r.pick(fields)
      if (r.chance(0.1)) {
        field = typo(r, field)
        options[field] = 1
      } else {
        let bad
        do bad = badValue(r, PG_MODEL[field])
        while (expectField(PG_MODEL[field], bad) === null)
        options[field] = bad
      }
      const label = `seed ${SEED + 1} case ${n} ${describeCase(options)}`
      await assert.rejects(PostgresProvider.connectWithOptions(options), (e) => {
        assert.ok(e instanceof TypeError || e instanceof RangeError, `${label}: ${e.name}: ${e.message}`)
        assert.ok(e.message.includes(`options.${field}`), `${label}: ${e.message}`)
        const expected = PG_MODEL[field] ? expectField(PG_MODEL[field], options[field]) : [TypeError, /is not a known option/]
        assert.ok(e instanceof expected[0], `${label}: expected ${expected[0].name}: ${e.message}`)
        assert.match(e.message, expected[1], label)
        assertNoSecret(assert, e, ['PgFuzz-Secret'])
        return true
      })
      checked++
    }
    assert.equal(checked, CASES / 2)
    assert.equal(server.accepted, 0, 'a refused option set reached the network')
  } finally {
    await server.close()
  }
})

function badUrls(port, secret) {
  const base = `postgres://u:${secret}@127.0.0.1:${port}/db`
  return [
    [`${base}\0`, TypeError, /must not contain control characters/],
    [`${base}\r\nx`, TypeError, /must not contain control characters/],
    [`postgres://u:${secret}\t@127.0.0.1:${port}/db`, TypeError, /must not contain control characters/],
    [`${base}\u0085`, TypeError, /must not contain control characters/],
    [`${base}\ud800`, TypeError, /lone surrogate/],
    [`${base}/${'d'.repeat(4100)}`, RangeError, /must be 1 to 4096 bytes long/],
    ['', RangeError, /must be 1 to 4096 bytes long/],
    [`mysql://u:${secret}@127.0.0.1:${port}/db`, TypeError, /must start with postgres:\/\//],
    [` ${base}`, TypeError, /must start with postgres:\/\//],
    [`postgres://u:${secret}@127.0.0.1:${port}0000/db`, TypeError, /is not a valid URL/],
    [`postgres://u:${secret}@[::1/db`, TypeError, /is not a valid URL/],
    [`${base}?passwd=${secret}`, TypeError, /unknown query parameter "passwd"/],
    [`${base}?sslmode=${secret}`, TypeError, /sslmode must be one of/],
    [`${base}?x%20${secret}=1`, TypeError, /unknown query parameter \(name not shown\)/],
  ]
}

test('bad database URLs: clear errors, no password in message/stack/cause, no connection', async () => {
  const server = await fakeServer()
  const secret = 'UrlFuzz-Secret'
  try {
    for (const [url, Class, pattern] of badUrls(server.port, secret)) {
      for (const connect of [
        () => PostgresProvider.connect(url),
        () => PostgresProvider.connectWithSchema(url, 'app'),
        () => PostgresProvider.connectWithOptions({ url }),
      ]) {
        await assert.rejects(connect(), (e) => {
          assert.ok(e instanceof Class, `${JSON.stringify(url).slice(0, 80)}: ${e.name}: ${e.message}`)
          assert.match(e.message, /^options\.url /)
          assert.match(e.message, pattern)
          assertNoSecret(assert, e, [secret, url])
          return true
        })
      }
    }
    assert.equal(server.accepted, 0)
  } finally {
    await server.close()
  }
})

test('the native layer validates URLs and schemas again (defense in depth), without the password', async () => {
  const server = await fakeServer()
  const secret = 'Native-Secret'
  try {
    for (const [url, , pattern] of badUrls(server.port, secret)) {
      // napi turns a lone surrogate into U+FFFD before Rust sees it: only JS can refuse it.
      if (pattern.source.includes('lone surrogate')) continue
      await assert.rejects(
        (async () => native.connectPostgres({ url, schema: 'steadfast' }))(),
        (e) => {
          assert.match(e.message, /database_url/, `${JSON.stringify(url).slice(0, 90)}: ${e.message}`)
          assertNoSecret(assert, e, [secret])
          return true
        },
      )
    }
    for (const schema of ['information_schema', 'PG_X', 'a"b', 'x;y', '']) {
      await assert.rejects(
        (async () => native.connectPostgres({ url: `postgres://u:${secret}@127.0.0.1:${server.port}/db`, schema }))(),
        (e) => {
          assert.match(e.message, /schema/, e.message)
          assertNoSecret(assert, e, [secret])
          return true
        },
      )
    }
    assert.equal(server.accepted, 0)
  } finally {
    await server.close()
  }
})

/** The test database's URL with `password` and a database that does not exist. */
function realServerUrl(password) {
  const url = new URL(DATABASE_URL)
  url.password = password
  url.pathname = '/steadfast_no_such_db'
  return url.toString()
}

test('connection failures never show the password (hang-up, echoing server, real server)', async () => {
  const hangUp = await fakeServer()
  const echo = await fakeServer(echoPasswordServer)
  try {
    const cases = [
      [`postgres://u:HangUp%2FSecret@127.0.0.1:${hangUp.port}/db?sslmode=disable`, ['HangUp/Secret', 'HangUp%2FSecret']],
      [`postgres://bob:Echo%20Me%21x9@127.0.0.1:${echo.port}/db?sslmode=disable`, ['Echo Me!x9', 'Echo%20Me%21x9']],
      [`postgres://bob@127.0.0.1:${echo.port}/db?password=QueryPw-77`, ['QueryPw-77']],
      [realServerUrl('RealPw-31'), ['RealPw-31']],
    ]
    for (const [url, secrets] of cases) {
      assert.ok(secrets.some((secret) => url.includes(secret)), 'test URL shape')
      await assert.rejects(PostgresProvider.connectWithOptions({ url, acquireTimeoutMs: 5000, maxConnections: 2 }), (e) => {
        assert.ok(e instanceof SteadfastError, `${e.name}: ${e.message}`)
        assert.equal(e.code, 'ERR_STEADFAST_PROVIDER_OPEN', e.message)
        assertNoSecret(assert, e, [...secrets, url])
        return true
      })
    }
    assert.ok(hangUp.accepted >= 1 && echo.accepted >= 2, 'the fake servers were reached')
  } finally {
    await hangUp.close()
    await echo.close()
  }
})

test('bad schemas are refused and create nothing', async () => {
  const pg = require('pg')
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  try {
    const before = (await client.query('SELECT nspname FROM pg_namespace')).rows.map((r) => r.nspname)
    const bad = ['pg_sf', 'Pg_Catalog', 'information_schema', 'INFORMATION_SCHEMA', 'sf"; DROP SCHEMA public; --', 'a b', 'a.b', 'é', 'a\0b', 'a'.repeat(64), '9x']
    for (const schema of bad) {
      await assert.rejects(PostgresProvider.connectWithSchema(DATABASE_URL, schema), (e) => {
        assert.ok(e instanceof TypeError, `${schema}: ${e.name}`)
        assert.match(e.message, /^options\.schema /)
        return true
      })
    }
    const after = (await client.query('SELECT nspname FROM pg_namespace')).rows.map((r) => r.nspname)
    assert.deepEqual(after.filter((n) => !before.includes(n) && bad.includes(n)), [])
  } finally {
    await client.end()
  }
})

// ---- claim options on a real steadfast-pg runtime ----

test('generated claim options run on a real PostgreSQL runtime; bad ones never start one', async () => {
  const s = await pgSchema('optfuzz')
  const provider = await PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 3 })
  try {
    const r = rng(SEED + 2)
    for (let n = 0; n < 40; n++) {
      const f = r.pick(CLAIM_FIELDS)
      const options = { ...FAST, [f]: badValue(r, MODEL[f]) }
      checkOutcome(expectRuntime(options), () => new Runtime(provider, options), `claim case ${n} ${describeCase(options)}`)
    }
    for (let n = 0; n < 3; n++) {
      const options = { ...FAST, maxAttempts: r.int(1, 20) }
      for (const f of CLAIM_FIELDS) if (r.chance(0.7)) options[f] = validValue(r, MODEL[f])
      if ((options.redeliveryBackoffBaseMs ?? 20) > (options.redeliveryBackoffCapMs ?? 30_000)) options.redeliveryBackoffCapMs = options.redeliveryBackoffBaseMs
      options.maxClaimDurationMs = Math.max(options.maxClaimDurationMs ?? 2000, 500)
      const rt = new Runtime(provider, options)
      rt.registerActivity('Double', async (_ctx, x) => x * 2)
      rt.registerOrchestration('Claimed', function* (ctx, x) {
        return yield ctx.scheduleActivity('Double', x)
      })
      await rt.start()
      try {
        const client = new Client(provider)
        const id = uid('claim')
        await client.startOrchestration(id, 'Claimed', n + 1)
        const st = await client.waitForOrchestration(id, 60_000)
        assert.equal(st.status, 'Completed', `${describeCase(options)}: ${st.error}`)
        assert.equal(st.output, (n + 1) * 2)
      } finally {
        await rt.shutdown(2000)
      }
    }
  } finally {
    await provider.close()
    await s.drop()
  }
})

