// The orchestration and activity context beyond the basics, on SQLite and PostgreSQL:
// activities on sessions (with and without retry), dequeueEvent, getValueFromInstance,
// detached starts, versioned sub-orchestrations and continue-as-new, KV listing / clear /
// clear-all / prune, typed variants, trace methods, activity tags, and duroxide's limits
// checked in JS (the instance keeps running instead of being failed after the turn).
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, until, backends, thrown } from './helpers.mjs'

const { Runtime, Client, MAX_KV_KEYS, MAX_KV_VALUE_BYTES, MAX_CUSTOM_STATUS_BYTES } = steadfast

function register(rt, flakyAttempts) {
  rt.registerActivity('WhoAmI', async (ctx, n) => ({ n, sessionId: ctx.sessionId, workerId: ctx.workerId }))
  rt.registerActivity('FlakyOnSession', async (ctx) => {
    const n = (flakyAttempts.get(ctx.instanceId) ?? 0) + 1
    flakyAttempts.set(ctx.instanceId, n)
    if (n < 2) throw new Error(`attempt ${n} failed`)
    return { attempts: n, sessionId: ctx.sessionId }
  })
  rt.registerActivity('JsonText', async (_ctx, v) => JSON.stringify(v))
  rt.registerActivity('Tagged', async (ctx) => {
    ctx.traceInfo('info from an activity')
    ctx.traceWarn('warn from an activity')
    ctx.traceError('error from an activity')
    ctx.traceDebug('debug from an activity')
    return { tag: ctx.tag(), cancelled: ctx.isCancelled(), seenByClient: (await ctx.getClient().getStatus(ctx.instanceId)).status }
  })

  rt.registerOrchestration('Sessions', function* (ctx) {
    const a = yield ctx.scheduleActivityOnSession('WhoAmI', 1, 'session-a')
    const b = yield ctx.scheduleActivity('WhoAmI', 2, { sessionId: 'session-a' })
    const retried = yield ctx.scheduleActivityWithRetryOnSession('FlakyOnSession', null, { maxAttempts: 3, backoff: 'none' }, 'session-b')
    const plain = yield ctx.scheduleActivity('WhoAmI', 3)
    return { a, b, retried, plain }
  })

  rt.registerOrchestration('Inbox', function* (ctx) {
    const first = yield ctx.dequeueEvent('inbox')
    const second = yield ctx.dequeueEventTyped('inbox')
    return [first, second]
  })

  rt.registerOrchestration('KvOwner', function* (ctx) {
    ctx.setValue('color', 'blue')
    ctx.setCustomStatus('ready')
    yield ctx.waitForEvent('done')
    return 'owner-done'
  })
  rt.registerOrchestration('KvReader', function* (ctx, owner) {
    const color = yield ctx.getValueFromInstance(owner, 'color')
    const missing = yield ctx.getValueFromInstance(owner, 'missing')
    return { color, missing }
  })

  rt.registerOrchestration('Spawner', function* (ctx, { plainId, versionedId }) {
    const started = yield ctx.startOrchestration('Versioned', plainId, 'plain')
    const startedV1 = yield ctx.startOrchestrationVersioned('Versioned', '1.0.0', versionedId, 'pinned')
    const reserved = thrown(() => ctx.startOrchestration('Versioned', 'sub::x', null))
    const nested = thrown(() => ctx.all([ctx.startOrchestration('Versioned', 'y', null)]))
    return { started, startedV1, reserved, nested }
  })
  rt.registerOrchestrationVersioned('Versioned', '1.0.0', function* (ctx, x) {
    return { version: ctx.orchestrationVersion, x }
  })
  rt.registerOrchestrationVersioned('Versioned', '2.0.0', function* (ctx, x) {
    return { version: ctx.orchestrationVersion, x }
  })
  rt.registerOrchestration('VersionedParent', function* (ctx, childId) {
    const v1 = yield ctx.scheduleSubOrchestrationVersioned('Versioned', '1.0.0', 'a')
    const v2 = yield ctx.scheduleSubOrchestrationVersionedWithId('Versioned', '2.0.0', childId, 'b')
    const latest = yield ctx.scheduleSubOrchestration('Versioned', 'c')
    return { v1, v2, latest }
  })
  rt.registerOrchestrationVersioned('Upgrade', '1.0.0', function* (ctx, n) {
    yield ctx.continueAsNewVersioned(n + 1, '2.0.0')
  })
  rt.registerOrchestrationVersioned('Upgrade', '2.0.0', function* (ctx, n) {
    return { n, version: ctx.orchestrationVersion, executionId: ctx.executionId }
  })

  // Pruning compares each key's last write time; a replayed setValue is stamped again, so it is
  // meant for keys carried over from an earlier execution (continue-as-new keeps KV).
  rt.registerOrchestration('Kv', function* (ctx, carried) {
    if (!carried) {
      ctx.setValue('a', '1')
      ctx.setValue('b', '2')
      ctx.setValue('c', '3')
      ctx.clearValue('b')
      const afterClear = { keys: ctx.getKvAllKeys(), length: ctx.getKvLength(), all: ctx.getKvAllValues() }
      const writtenBy = yield ctx.utcNow() // a system activity: runs after this turn committed
      yield ctx.scheduleTimer(50)
      yield ctx.continueAsNew({ afterClear, writtenBy })
    }
    ctx.setValue('d', '4') // written now, well after writtenBy
    const pruned = ctx.pruneKvValuesUpdatedBefore(carried.writtenBy + 1)
    const afterPrune = ctx.getKvAllKeys()
    const badCutoff = thrown(() => ctx.pruneKvValuesUpdatedBefore(-1))
    ctx.clearAllValues()
    return { afterClear: carried.afterClear, pruned, afterPrune, badCutoff, afterClearAll: ctx.getKvLength() }
  })

  rt.registerOrchestration('Limits', function* (ctx) {
    const bigValue = thrown(() => ctx.setValue('big', 'x'.repeat(MAX_KV_VALUE_BYTES + 1)))
    ctx.setValue('exact', 'x'.repeat(MAX_KV_VALUE_BYTES))
    for (let i = 1; i < MAX_KV_KEYS; i++) ctx.setValue(`k${i}`, 'v')
    const atLimit = ctx.getKvLength()
    const overwrite = thrown(() => ctx.setValue('k1', 'again'))
    const tooMany = thrown(() => ctx.setValue('one-too-many', 'v'))
    const bigStatus = thrown(() => ctx.setCustomStatus('s'.repeat(MAX_CUSTOM_STATUS_BYTES + 1)))
    const bigTag = thrown(() => ctx.scheduleActivity('Tagged').withTag('t'.repeat(257)))
    const badQueue = thrown(() => ctx.dequeueEvent(''))
    const badSession = thrown(() => ctx.scheduleActivity('WhoAmI', 1, { session: 'x' }))
    yield ctx.scheduleTimer(1)
    return { bigValue, atLimit, overwrite, tooMany, bigStatus, bigTag, badQueue, badSession, keysAfterTurn: ctx.getKvLength() }
  })

  rt.registerOrchestration('Typed', function* (ctx) {
    ctx.traceInfo('info from an orchestration')
    ctx.traceWarn('warn')
    ctx.traceError('error')
    ctx.traceDebug('debug')
    const text = yield ctx.scheduleActivity('JsonText', { x: 1 })
    const decoded = yield ctx.scheduleActivityTyped('JsonText', { x: 2 })
    const all = yield ctx.allTyped([ctx.scheduleActivity('JsonText', [3]), ctx.scheduleActivity('JsonText', 'plain')])
    const race = yield ctx.raceTyped(ctx.scheduleActivity('JsonText', { y: 4 }), ctx.scheduleTimer(60_000))
    const tagged = yield ctx.scheduleActivity('Tagged', null, { tag: 'gpu' })
    const untagged = yield ctx.scheduleActivity('Tagged')
    return { text, decoded, all, race, tagged, untagged }
  })
}

for (const backend of backends('ctxapi')) {
  describe(`context API on ${backend.name}`, { timeout: 120_000 }, () => {
    let env
    let rt
    let client
    const flakyAttempts = new Map()

    before(async () => {
      env = await backend.open()
      rt = new Runtime(env.provider, { ...FAST, workerTagFilter: { defaultAnd: ['gpu'] }, workerConcurrency: 4 })
      register(rt, flakyAttempts)
      await rt.start()
      client = new Client(env.provider)
    })

    after(async () => {
      await rt?.shutdown(2000)
      await env?.cleanup()
    })

    async function run(name, input, id = uid(name.toLowerCase())) {
      await client.startOrchestration(id, name, input)
      const s = await client.waitForOrchestration(id, 60_000)
      assert.equal(s.status, 'Completed', `${name}: ${s.error}`)
      return s.output
    }

    test('activities on sessions, with and without retry', async () => {
      const out = await run('Sessions')
      assert.deepEqual([out.a.n, out.a.sessionId], [1, 'session-a'])
      assert.deepEqual([out.b.n, out.b.sessionId], [2, 'session-a'])
      assert.equal(out.a.workerId, out.b.workerId, 'one session, one worker')
      assert.deepEqual(out.retried, { attempts: 2, sessionId: 'session-b' })
      assert.equal(out.plain.sessionId, null)
    })

    test('dequeueEvent reads queued messages in order, even if sent before the dequeue', async () => {
      const id = uid('inbox')
      await client.startOrchestration(id, 'Inbox')
      await client.enqueueEvent(id, 'inbox', { seq: 1 })
      await client.enqueueEvent(id, 'inbox', JSON.stringify({ seq: 2 }))
      const s = await client.waitForOrchestration(id, 60_000)
      assert.equal(s.status, 'Completed', s.error)
      // The typed dequeue decodes the JSON text a second time.
      assert.deepEqual(s.output, [{ seq: 1 }, { seq: 2 }])
    })

    test('getValueFromInstance reads another instance (null when missing)', async () => {
      const owner = uid('owner')
      await client.startOrchestration(owner, 'KvOwner')
      await until(async () => (await client.getStatus(owner)).customStatus === 'ready', 30_000, 'owner ready')
      assert.deepEqual(await run('KvReader', owner), { color: 'blue', missing: null })
      await client.raiseEvent(owner, 'done', null)
      assert.equal((await client.waitForOrchestration(owner, 30_000)).output, 'owner-done')
    })

    test('detached starts run on their own (plain: latest version; versioned: pinned)', async () => {
      const plainId = uid('detached')
      const versionedId = uid('detached-v1')
      const out = await run('Spawner', { plainId, versionedId })
      assert.equal(out.started, null)
      assert.equal(out.startedV1, null)
      assert.equal(out.reserved.name, 'TypeError')
      assert.match(out.reserved.message, /instanceId must not start with "sub::"/)
      assert.equal(out.nested.name, 'TypeError')
      assert.match(out.nested.message, /startOrchestration tasks cannot be combined/)
      const plain = await client.waitForOrchestration(plainId, 30_000)
      assert.deepEqual(plain.output, { version: '2.0.0', x: 'plain' })
      const pinned = await client.waitForOrchestration(versionedId, 30_000)
      assert.deepEqual(pinned.output, { version: '1.0.0', x: 'pinned' })
    })

    test('versioned sub-orchestrations and versioned continue-as-new', async () => {
      const childId = uid('child-v2')
      const out = await run('VersionedParent', childId)
      assert.deepEqual(out, {
        v1: { version: '1.0.0', x: 'a' },
        v2: { version: '2.0.0', x: 'b' },
        latest: { version: '2.0.0', x: 'c' },
      })
      assert.deepEqual((await client.getStatus(childId)).output, { version: '2.0.0', x: 'b' })

      const id = uid('upgrade')
      await client.startOrchestrationVersioned(id, 'Upgrade', 1, '1.0.0')
      const s = await client.waitForOrchestration(id, 60_000)
      assert.deepEqual(s.output, { n: 2, version: '2.0.0', executionId: 2 })
    })

    test('KV listing, clear, prune and clear-all', async () => {
      const out = await run('Kv')
      assert.deepEqual(out.afterClear, { keys: ['a', 'c'], length: 2, all: { a: '1', c: '3' } })
      assert.equal(out.pruned, 2, 'a and c were written in the first execution')
      assert.deepEqual(out.afterPrune, ['d'])
      assert.equal(out.badCutoff.name, 'RangeError')
      assert.match(out.badCutoff.message, /^cutoffMs must be between 0 and 9007199254740991 \(got -1\)$/)
      assert.equal(out.afterClearAll, 0)
    })

    test("duroxide's limits throw in the generator instead of failing the instance", async () => {
      const out = await run('Limits')
      assert.equal(out.bigValue.name, 'RangeError')
      assert.match(out.bigValue.message, /value of key "big" must be at most 65536 bytes/)
      assert.equal(out.atLimit, MAX_KV_KEYS)
      assert.equal(out.overwrite, null, 'overwriting an existing key adds no key')
      assert.equal(out.tooMany.name, 'RangeError')
      assert.match(out.tooMany.message, /limit of 150 keys/)
      assert.match(out.bigStatus.message, /status must be at most 262144 bytes/)
      assert.match(out.bigTag.message, /tag must be at most 256 bytes/)
      assert.equal(out.badQueue.name, 'TypeError')
      assert.match(out.badQueue.message, /queueName must be a non-empty string/)
      assert.match(out.badSession.message, /^options\.session is not a known option \(did you mean "sessionId"\?\)$/)
      assert.equal(out.keysAfterTurn, MAX_KV_KEYS, 'the 150 keys were committed')
    })

    test('typed variants decode JSON text again; trace methods; activity tag, client, isCancelled', async () => {
      const out = await run('Typed')
      assert.equal(out.text, '{"x":1}')
      assert.deepEqual(out.decoded, { x: 2 })
      assert.deepEqual(out.all, [{ ok: [3] }, { ok: 'plain' }])
      assert.deepEqual(out.race, { index: 0, value: { y: 4 } })
      assert.deepEqual(out.tagged, { tag: 'gpu', cancelled: false, seenByClient: 'Running' })
      assert.equal(out.untagged.tag, null)
    })
  })
}
