// Dead letters on the Client (steadfast-pg only): a real poisoned activity is dead-lettered,
// listed, read, requeued (it leaves the store, is back on the worker queue and runs again),
// then more are produced and purged. Plus argument validation, the native backstop, and the
// ERR_STEADFAST_UNSUPPORTED rejection on SQLite (also from an activity's client).
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { steadfast, DATABASE_URL, FAST, POISON_FAST, uid, until, pgSchema } from './helpers.mjs'

const require = createRequire(import.meta.url)
const pg = require('pg')
const native = require('../index.js')
const { PostgresProvider, SqliteProvider, Runtime, Client, SteadfastError } = steadfast

const DEAD_LETTER_FIELDS = [
  'activityId',
  'attemptCount',
  'deadAt',
  'enqueuedAt',
  'error',
  'executionId',
  'id',
  'instanceId',
  'maxAttempts',
  'queue',
  'reason',
  'sessionId',
  'tag',
  'workItem',
]

const METHODS = ['listDeadLetters', 'getDeadLetter', 'requeueDeadLetter', 'purgeDeadLetters']

function callsActivity(name) {
  return function* (ctx, input) {
    yield ctx.scheduleActivity(name, input)
    return 'unexpected'
  }
}

async function rejectsWith(promise, ErrorClass, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof ErrorClass, `expected ${ErrorClass.name}, got ${e?.name}: ${e?.message}`)
    assert.equal(e.code, code, e.message)
    assert.match(e.message, pattern)
    return true
  })
}

/** Start instances of `orchestration` and wait until each has failed as poison. */
async function poison(client, orchestration, ids) {
  await Promise.all(ids.map((id) => client.startOrchestration(id, orchestration, 'payload')))
  for (const id of ids) {
    const s = await client.waitForOrchestration(id, 30_000)
    assert.equal(s.status, 'Failed', `${id}: ${JSON.stringify(s)}`)
    assert.equal(s.errorCategory, 'poison', s.error)
  }
}

describe('dead letters on postgres', { timeout: 120_000 }, () => {
  let s
  let provider
  let client
  let sql

  before(async () => {
    s = await pgSchema('dl')
    provider = await PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 4 })
    client = new Client(provider)
    sql = new pg.Client({ connectionString: DATABASE_URL })
    await sql.connect()
  })

  after(async () => {
    await sql?.end()
    await provider?.close()
    await s?.drop()
  })

  const workerQueue = async () =>
    (await sql.query(`SELECT instance_id, work_item, attempt_count FROM "${s.schema}".worker_queue ORDER BY id`)).rows

  test('a poisoned activity is listed, read, requeued, and runs again', async () => {
    const id = uid('dl')
    const rt = new Runtime(provider, POISON_FAST)
    rt.registerOrchestration('CallsFlaky', callsActivity('Flaky'))
    await rt.start()
    let d
    try {
      await poison(client, 'CallsFlaky', [id])
      // The poison ack dead-letters the item in the transaction that enqueues ActivityFailed,
      // so the letter exists once the instance has failed.
      const letters = await client.listDeadLetters()
      assert.equal(letters.length, 1, JSON.stringify(letters))
      d = letters[0]
    } finally {
      await rt.shutdown(2000)
    }

    assert.deepEqual(Object.keys(d).sort(), DEAD_LETTER_FIELDS)
    assert.ok(Number.isSafeInteger(d.id) && d.id > 0, `id ${d.id}`)
    assert.equal(d.queue, 'worker')
    assert.equal(d.instanceId, id)
    assert.equal(d.executionId, 1)
    assert.equal(d.attemptCount, 2)
    assert.equal(d.maxAttempts, 1)
    assert.equal(d.reason, 'poison')
    assert.match(d.error, /Flaky.*exceeded 2 attempts \(max 1\)/)
    assert.equal(d.sessionId, null)
    assert.equal(d.tag, null)
    assert.equal(typeof d.workItem, 'string')
    const item = JSON.parse(d.workItem).ActivityExecute
    assert.ok(item, d.workItem)
    assert.equal(item.instance, id)
    assert.equal(item.name, 'Flaky')
    assert.equal(item.input, JSON.stringify('payload'))
    assert.equal(d.activityId, item.id)
    assert.ok(Number.isSafeInteger(d.enqueuedAt) && Number.isSafeInteger(d.deadAt))
    assert.ok(d.enqueuedAt <= d.deadAt, `enqueuedAt ${d.enqueuedAt} > deadAt ${d.deadAt}`)
    assert.ok(Math.abs(d.deadAt - Date.now()) < 60_000, `deadAt ${d.deadAt}`)

    // Reads and filters.
    assert.deepEqual(await client.getDeadLetter(d.id), d)
    assert.equal(await client.getDeadLetter(d.id + 1000), null)
    assert.equal(await client.getDeadLetter(Number.MAX_SAFE_INTEGER), null)
    assert.deepEqual(await client.listDeadLetters({ instanceId: id }), [d])
    assert.deepEqual(await client.listDeadLetters({ instanceId: 'someone-else' }), [])
    assert.deepEqual(await client.listDeadLetters({ afterId: d.id }), [])
    assert.deepEqual(await client.listDeadLetters({ afterId: d.id - 1, limit: 1, instanceId: undefined }), [d])
    assert.deepEqual(await workerQueue(), [])

    // Requeue (no runtime running, so the queue can be inspected): the letter leaves the
    // store and the original item is back on the worker queue with a fresh attempt count.
    assert.equal(await client.requeueDeadLetter(d.id), true)
    assert.equal(await client.getDeadLetter(d.id), null)
    assert.deepEqual(await client.listDeadLetters(), [])
    assert.equal(await client.requeueDeadLetter(d.id), false, 'a second requeue finds nothing')
    assert.deepEqual(await workerQueue(), [{ instance_id: id, work_item: d.workItem, attempt_count: 0 }])

    // A runtime that has the activity picks the requeued message up. Its activity client
    // (the runtime's own pool) reaches the dead-letter store too.
    const runs = []
    const rt2 = new Runtime(provider, POISON_FAST)
    rt2.registerOrchestration('CallsFlaky', callsActivity('Flaky'))
    rt2.registerActivity('Flaky', async (ctx, input) => {
      const letters = await ctx.getClient().listDeadLetters({ instanceId: ctx.instanceId })
      runs.push({ instanceId: ctx.instanceId, input, letters })
      return 'ran'
    })
    await rt2.start()
    try {
      await until(() => runs.length > 0, 20_000, 'the requeued activity to run')
      assert.deepEqual(runs, [{ instanceId: id, input: 'payload', letters: [] }])
      await until(async () => (await workerQueue()).length === 0, 10_000, 'the requeued item to be acked')
      // The instance had already failed; the late result does not revive it.
      assert.equal((await client.getStatus(id)).status, 'Failed')
      assert.deepEqual(await client.listDeadLetters(), [])
    } finally {
      await rt2.shutdown(2000)
    }
  })

  test('list pages by id; purge filters by instance and age', async () => {
    const [a, b, c] = [uid('dla'), uid('dlb'), uid('dlc')]
    const rt = new Runtime(provider, POISON_FAST)
    rt.registerOrchestration('CallsMissing', callsActivity('NobodyRunsThis'))
    await rt.start()
    try {
      await poison(client, 'CallsMissing', [a, b, c])
    } finally {
      await rt.shutdown(2000)
    }

    const all = await client.listDeadLetters()
    assert.equal(all.length, 3, JSON.stringify(all))
    assert.deepEqual(all.map((d) => d.instanceId).sort(), [a, b, c].sort())
    assert.ok(all[0].id < all[1].id && all[1].id < all[2].id, 'id order')
    for (const d of all) {
      assert.equal(d.reason, 'poison')
      assert.equal(d.queue, 'worker')
      assert.equal(JSON.parse(d.workItem).ActivityExecute.name, 'NobodyRunsThis')
    }

    // Keyset paging.
    const page1 = await client.listDeadLetters({ limit: 2 })
    assert.deepEqual(page1, all.slice(0, 2))
    const page2 = await client.listDeadLetters({ limit: 2, afterId: page1[1].id })
    assert.deepEqual(page2, all.slice(2))
    assert.deepEqual(await client.listDeadLetters({ limit: 2, afterId: page2[0].id }), [])
    assert.deepEqual(await client.listDeadLetters({ instanceId: b }), all.filter((d) => d.instanceId === b))

    // Purge: by age (none is an hour old), by instance, then everything.
    assert.equal(await client.purgeDeadLetters({ deadBeforeMs: Date.now() - 3_600_000 }), 0)
    assert.equal(await client.purgeDeadLetters({ instanceId: 'someone-else' }), 0)
    assert.equal(await client.purgeDeadLetters({ instanceId: a }), 1)
    assert.equal(await client.purgeDeadLetters({ instanceId: a }), 0)
    assert.deepEqual(await client.listDeadLetters(), all.filter((d) => d.instanceId !== a))
    assert.equal(await client.purgeDeadLetters({ instanceId: b, deadBeforeMs: Date.now() + 60_000 }), 1)
    assert.deepEqual(await client.listDeadLetters(), all.filter((d) => d.instanceId === c))
    const gone = all.find((d) => d.instanceId === c)
    assert.equal(await client.purgeDeadLetters(), 1)
    assert.deepEqual(await client.listDeadLetters(), [])
    assert.equal(await client.getDeadLetter(gone.id), null)
    assert.equal(await client.requeueDeadLetter(gone.id), false, 'a purged letter cannot be requeued')
    assert.equal(await client.purgeDeadLetters({}), 0)
  })

  test('arguments are validated in JS, naming the field', async () => {
    const badOptions = [
      [{ limit: 0 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.limit must be between 1 and 10000 \(got 0\)$/],
      [{ limit: 10_001 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.limit must be between 1 and 10000 \(got 10001\)$/],
      [{ limit: 2.5 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.limit must be an integer \(got 2\.5\)$/],
      [{ limit: NaN }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.limit must be a finite number \(got NaN\)$/],
      [{ limit: '10' }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.limit must be a number \(got string "10"\)$/],
      [{ afterId: -1 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.afterId must be between 0 and 9007199254740991 \(got -1\)$/],
      [{ afterId: 2 ** 53 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.afterId must be between 0 and/],
      [{ afterId: null }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.afterId must be a number \(got null\)$/],
      [{ instanceId: '' }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.instanceId must be a non-empty string \(got string ""\)$/],
      [{ instanceId: 7 }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.instanceId must be a non-empty string \(got number 7\)$/],
      [{ instanceID: 'x' }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.instanceID is not a known option \(did you mean "instanceId"\?\)$/],
      [{ deadBeforeMs: 1 }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.deadBeforeMs is not a known option/],
      ['all', TypeError, 'ERR_INVALID_ARG_TYPE', /^options must be an object \(got string "all"\)$/],
      [null, TypeError, 'ERR_INVALID_ARG_TYPE', /^options must be an object \(got null\)$/],
    ]
    for (const [options, ErrorClass, code, pattern] of badOptions) {
      await rejectsWith(client.listDeadLetters(options), ErrorClass, code, pattern)
    }

    const badPurge = [
      [{ deadBeforeMs: -1 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.deadBeforeMs must be between 0 and 8640000000000000 \(got -1\)$/],
      [{ deadBeforeMs: 1.5 }, RangeError, 'ERR_OUT_OF_RANGE', /^options\.deadBeforeMs must be an integer \(got 1\.5\)$/],
      [{ deadBeforeMs: new Date() }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.deadBeforeMs must be a number \(got object\)$/],
      [{ instanceId: '' }, TypeError, 'ERR_INVALID_ARG_TYPE', /^options\.instanceId must be a non-empty string/],
      [{ limit: 5 }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.limit is not a known option$/],
      [{ deadBefore: 5 }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.deadBefore is not a known option \(did you mean "deadBeforeMs"\?\)$/],
      [[], TypeError, 'ERR_INVALID_ARG_TYPE', /^options must be an object \(got an array\)$/],
    ]
    for (const [options, ErrorClass, code, pattern] of badPurge) {
      await rejectsWith(client.purgeDeadLetters(options), ErrorClass, code, pattern)
    }

    const badIds = [
      [0, RangeError, 'ERR_OUT_OF_RANGE', /^id must be between 1 and 9007199254740991 \(got 0\)$/],
      [-3, RangeError, 'ERR_OUT_OF_RANGE', /^id must be between 1 and 9007199254740991 \(got -3\)$/],
      [1.5, RangeError, 'ERR_OUT_OF_RANGE', /^id must be an integer \(got 1\.5\)$/],
      [2 ** 53, RangeError, 'ERR_OUT_OF_RANGE', /^id must be between 1 and 9007199254740991 \(got 9007199254740992\)$/],
      [NaN, RangeError, 'ERR_OUT_OF_RANGE', /^id must be a finite number \(got NaN\)$/],
      [Infinity, RangeError, 'ERR_OUT_OF_RANGE', /^id must be a finite number/],
      ['1', TypeError, 'ERR_INVALID_ARG_TYPE', /^id must be a number \(got string "1"\)$/],
      [1n, TypeError, 'ERR_INVALID_ARG_TYPE', /^id must be a number \(got bigint\)$/],
      [undefined, TypeError, 'ERR_INVALID_ARG_TYPE', /^id must be a number \(got undefined\)$/],
    ]
    for (const [id, ErrorClass, code, pattern] of badIds) {
      await rejectsWith(client.getDeadLetter(id), ErrorClass, code, pattern)
      await rejectsWith(client.requeueDeadLetter(id), ErrorClass, code, pattern)
    }

    // Valid edge values reach the store.
    assert.deepEqual(await client.listDeadLetters({ limit: 10_000, afterId: Number.MAX_SAFE_INTEGER }), [])
    assert.equal(await client.requeueDeadLetter(Number.MAX_SAFE_INTEGER), false)
  })

  test('the native layer re-checks what JS validates', async () => {
    const raw = new native.NativeClient(provider._native)
    const invalid = (field) => (e) => {
      assert.match(e.message, new RegExp(`^\\[ERR_STEADFAST_INVALID_ARGUMENT\\] ${field} must be an integer between`))
      return true
    }
    await assert.rejects(raw.getDeadLetter(0), invalid('id'))
    await assert.rejects(raw.requeueDeadLetter(-1), invalid('id'))
    await assert.rejects(raw.listDeadLetters(undefined, 0, 0), invalid('limit'))
    await assert.rejects(raw.listDeadLetters(undefined, -1, 10), invalid('afterId'))
    await assert.rejects(raw.purgeDeadLetters(undefined, -1), invalid('deadBeforeMs'))
  })

  test('a closed provider rejects with ERR_STEADFAST_PROVIDER', async () => {
    const other = await PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 2 })
    const c = new Client(other)
    assert.deepEqual(await c.listDeadLetters(), [])
    await other.close()
    await rejectsWith(c.listDeadLetters(), SteadfastError, 'ERR_STEADFAST_PROVIDER', /list_dead_letters/)
  })
})

describe('dead letters on sqlite', { timeout: 60_000 }, () => {
  const unsupported = (method) =>
    new RegExp(`^client\\.${method}\\(\\) is not supported on SQLite: dead letters need the PostgreSQL provider`)

  test('every dead-letter method rejects with ERR_STEADFAST_UNSUPPORTED', async () => {
    const client = new Client(await SqliteProvider.inMemory())
    const calls = {
      listDeadLetters: () => client.listDeadLetters({ limit: 5 }),
      getDeadLetter: () => client.getDeadLetter(1),
      requeueDeadLetter: () => client.requeueDeadLetter(1),
      purgeDeadLetters: () => client.purgeDeadLetters(),
    }
    assert.deepEqual(Object.keys(calls), METHODS)
    for (const [method, call] of Object.entries(calls)) {
      await rejectsWith(call(), SteadfastError, 'ERR_STEADFAST_UNSUPPORTED', unsupported(method))
    }
    // Arguments are still validated first.
    await rejectsWith(client.getDeadLetter(0), RangeError, 'ERR_OUT_OF_RANGE', /^id must be between 1 and/)
    await rejectsWith(client.listDeadLetters({ limt: 5 }), TypeError, 'ERR_INVALID_ARG_VALUE', /did you mean "limit"/)
  })

  test("an activity's client on SQLite rejects too", async () => {
    const provider = await SqliteProvider.inMemory()
    const rt = new Runtime(provider, FAST)
    rt.registerActivity('Peek', async (ctx) => {
      try {
        await ctx.getClient().listDeadLetters()
        return 'listed'
      } catch (e) {
        return { code: e.code, message: e.message, steadfast: e instanceof SteadfastError }
      }
    })
    rt.registerOrchestration('Peeks', function* (ctx) {
      return yield ctx.scheduleActivity('Peek')
    })
    await rt.start()
    try {
      const client = new Client(provider)
      const id = uid('peek')
      await client.startOrchestration(id, 'Peeks')
      const s = await client.waitForOrchestration(id, 20_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.equal(s.output.code, 'ERR_STEADFAST_UNSUPPORTED')
      assert.equal(s.output.steadfast, true)
      assert.match(s.output.message, unsupported('listDeadLetters'))
    } finally {
      await rt.shutdown(2000)
    }
  })
})
