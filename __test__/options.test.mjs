// Option validation: every class of bad input is rejected in JS, before anything starts,
// with an error that names the field and the rule.
import { test, before } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, DATABASE_URL } from './helpers.mjs'

const { Runtime, SqliteProvider, PostgresProvider } = steadfast
let provider

before(async () => {
  provider = await SqliteProvider.inMemory()
})

function rejects(options, ErrorClass, pattern) {
  assert.throws(
    () => new Runtime(provider, options),
    (e) => {
      assert.ok(e instanceof ErrorClass, `expected ${ErrorClass.name}, got ${e.name}: ${e.message}`)
      assert.match(e.message, pattern)
      return true
    },
  )
}

test('valid options, including every documented field, are accepted', () => {
  const rt = new Runtime(provider, {
    orchestrationConcurrency: 1,
    workerConcurrency: 3,
    dispatcherPollIntervalMs: 10,
    dispatcherLongPollTimeoutMs: 1000,
    orchestratorLockTimeoutMs: 10_000,
    orchestratorLockRenewalBufferMs: 1000,
    workerLockTimeoutMs: 20_000,
    workerLockRenewalBufferMs: 2000,
    maxAttempts: 5,
    unregisteredBackoffBaseMs: 100,
    unregisteredBackoffMaxMs: 1000,
    activityCancellationGracePeriodMs: 500,
    sessionLockTimeoutMs: 30_000,
    sessionLockRenewalBufferMs: 5000,
    sessionIdleTimeoutMs: 60_000,
    sessionCleanupIntervalMs: 60_000,
    maxSessionsPerRuntime: 4,
    workerNodeId: 'node-a',
    workerTagFilter: { defaultAnd: ['gpu'] },
    logFormat: 'json',
    logLevel: 'warn',
    serviceName: 'svc',
    serviceVersion: '1.2.3',
    gaugePollIntervalMs: 5000,
    fetchFanout: 4,
    maxClaimAttempts: 4,
    maxClaimDurationMs: 500,
    redeliveryBackoffBaseMs: 10,
    redeliveryBackoffCapMs: 1000,
    redeliveryBackoffJitter: 0.5,
    longPollRecheckMs: 100,
    orchestrationConcurrency: undefined,
  })
  assert.equal(rt.metricsSnapshot(), null)
  new Runtime(provider)
  new Runtime(provider, {})
  new Runtime(provider, { workerTagFilter: 'any' })
  new Runtime(provider, { workerTagFilter: { tags: ['a', 'b'] } })
})

test('wrong types are TypeErrors naming the field', () => {
  rejects({ maxAttempts: '3' }, TypeError, /options\.maxAttempts must be a number \(got string "3"\)/)
  rejects({ serviceName: 3 }, TypeError, /options\.serviceName must be a non-empty string \(got number 3\)/)
  rejects({ workerNodeId: '' }, TypeError, /options\.workerNodeId must be a non-empty string/)
  rejects({ workerTagFilter: 5 }, TypeError, /options\.workerTagFilter must be an object/)
  rejects({ workerTagFilter: { tags: 'gpu' } }, TypeError, /options\.workerTagFilter\.tags must be an array/)
  rejects('fast', TypeError, /options must be an object/)
  rejects([], TypeError, /options must be an object/)
})

test('NaN, infinity and fractions are RangeErrors', () => {
  rejects({ workerConcurrency: NaN }, RangeError, /options\.workerConcurrency must be a finite number \(got NaN\)/)
  rejects({ workerLockTimeoutMs: Infinity }, RangeError, /options\.workerLockTimeoutMs must be a finite number/)
  rejects({ dispatcherPollIntervalMs: 1.5 }, RangeError, /options\.dispatcherPollIntervalMs must be an integer \(got 1\.5\)/)
})

test('negative and out-of-range values are RangeErrors with the bounds', () => {
  rejects({ orchestrationConcurrency: -1 }, RangeError, /options\.orchestrationConcurrency must be between 0 and 1024 \(got -1\)/)
  rejects({ maxAttempts: 0 }, RangeError, /options\.maxAttempts must be between 1 and 1000000 \(got 0\)/)
  rejects({ fetchFanout: 2000 }, RangeError, /options\.fetchFanout must be between 1 and 1024/)
  rejects({ redeliveryBackoffJitter: 1.5 }, RangeError, /options\.redeliveryBackoffJitter must be between 0 and 1/)
  rejects({ workerTagFilter: { tags: [] } }, RangeError, /workerTagFilter\.tags must hold 1 to 5 tags \(got 0\)/)
  rejects({ workerTagFilter: { tags: ['a', 'b', 'c', 'd', 'e', 'f'] } }, RangeError, /1 to 5 tags \(got 6\)/)
  rejects({ workerNodeId: 'x'.repeat(257) }, RangeError, /options\.workerNodeId must be at most 256 bytes as UTF-8 \(got 257\)/)
})

test('enumerations list their values', () => {
  rejects({ logFormat: 'yaml' }, TypeError, /options\.logFormat must be one of "json", "pretty", "compact" \(got string "yaml"\)/)
  rejects({ logLevel: 'verbose' }, TypeError, /options\.logLevel must be one of "error", "warn", "info", "debug", "trace", "off"/)
  rejects({ workerTagFilter: 'gpu' }, TypeError, /options\.workerTagFilter must be "defaultOnly", "any", "none"/)
  rejects({ workerTagFilter: { tags: ['a'], defaultAnd: ['b'] } }, TypeError, /exactly one key/)
})

test('unknown keys are rejected with the closest known key', () => {
  rejects({ maxAttempt: 3 }, TypeError, /options\.maxAttempt is not a known option \(did you mean "maxAttempts"\?\)/)
  rejects({ workerConcurency: 3 }, TypeError, /did you mean "workerConcurrency"/)
  rejects({ dispatcherPollInterval: 3 }, TypeError, /did you mean "dispatcherPollIntervalMs"/)
  rejects({ totallyUnrelated: 1 }, TypeError, /^options\.totallyUnrelated is not a known option$/)
})

test('cross-field rules that would panic in duroxide are checked up front', () => {
  rejects({ sessionIdleTimeoutMs: 20_000 }, RangeError, /options\.sessionIdleTimeoutMs \(20000\) must be greater than options\.workerLockTimeoutMs - options\.workerLockRenewalBufferMs \(25000\)/)
  rejects({ unregisteredBackoffBaseMs: 5000, unregisteredBackoffMaxMs: 100 }, RangeError, /unregisteredBackoffBaseMs \(5000\) must be at most options\.unregisteredBackoffMaxMs \(100\)/)
  rejects({ redeliveryBackoffBaseMs: 500, redeliveryBackoffCapMs: 100 }, RangeError, /redeliveryBackoffBaseMs \(500\) must be at most/)
})

test('errors carry Node-style codes', () => {
  assert.throws(() => new Runtime(provider, { maxAttempts: -1 }), { code: 'ERR_OUT_OF_RANGE' })
  assert.throws(() => new Runtime(provider, { maxAttempts: 'x' }), { code: 'ERR_INVALID_ARG_TYPE' })
  assert.throws(() => new Runtime(provider, { maxAtempts: 1 }), { code: 'ERR_INVALID_ARG_VALUE' })
  assert.throws(() => new Runtime({}, {}), { code: 'ERR_INVALID_ARG_TYPE' })
})

test('PostgreSQL connect options are validated without echoing the URL', async () => {
  await assert.rejects(PostgresProvider.connectWithOptions({ url: 'mysql://u:secret@h/db' }), (e) => {
    assert.ok(e instanceof TypeError)
    assert.match(e.message, /options\.url must start with postgres:\/\//)
    assert.doesNotMatch(e.message, /secret/)
    return true
  })
  await assert.rejects(PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: 'bad;name' }), /options\.schema must be 1-63 characters/)
  await assert.rejects(PostgresProvider.connectWithOptions({ url: DATABASE_URL, maxConnections: 1 }), RangeError)
  await assert.rejects(PostgresProvider.connectWithOptions({ url: DATABASE_URL, pollling: 'listen' }), /did you mean "polling"/)
  await assert.rejects(PostgresProvider.connectWithOptions({ schema: 'x' }), /options\.url is required/)
  await assert.rejects(PostgresProvider.connectWithSchema(DATABASE_URL, 'pg_nope'), /not starting with a digit or "pg_"/)
})

test('scheduling arguments are validated inside the generator', () => {
  // Exercised through a fake context: the methods validate before anything is yielded.
  const { OrchestrationContext } = steadfast
  const ctx = new OrchestrationContext(null, 0, { instanceId: 'i', executionId: 1, name: 'O', version: '1.0.0' })
  assert.throws(() => ctx.scheduleTimer(-5), RangeError)
  assert.throws(() => ctx.scheduleTimer(1.5), RangeError)
  assert.throws(() => ctx.scheduleTimer(3_155_760_000_001), /delayMs must be between 0 and 3155760000000/)
  assert.doesNotThrow(() => ctx.scheduleTimer(3_155_760_000_000))
  assert.throws(() => ctx.scheduleActivity('', 1), TypeError)
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, { maxAttempts: 0 }), /retry\.maxAttempts must be between 1 and 1000/)
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, {}), { name: 'TypeError', message: 'retry.maxAttempts is required' })
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, { maxAttempts: '2' }), { name: 'TypeError', message: /retry\.maxAttempts must be a number/ })
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, { maxAttempts: 2, backoff: { kind: 'exponential', multiplier: '2' } }), TypeError)
  assert.throws(() => ctx.scheduleTimer('5'), { name: 'TypeError', message: 'delayMs must be a number (got string "5")' })
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, { maxAttempts: 2, backoff: 'sometimes' }), /retry\.backoff must be/)
  assert.throws(() => ctx.scheduleActivityWithRetry('A', 1, { maxAttempts: 2, retries: 3 }), /retry\.retries is not a known option/)
  assert.throws(() => ctx.race(ctx.scheduleTimer(1)), /race\(\) needs at least 2 tasks \(got 1\)/)
  assert.throws(() => ctx.all([ctx.scheduleTimer(1), ctx.all([])]), /all tasks cannot be combined/)
  assert.throws(() => ctx.all([ctx.continueAsNew(1)]), /continueAsNew tasks cannot be combined/)
  assert.throws(() => ctx.scheduleActivity('A', () => 1), /input must be JSON-serializable/)
  assert.throws(() => ctx.scheduleTimer(1).withTag('gpu'), /withTag\(\) applies only to scheduleActivity/)
})
