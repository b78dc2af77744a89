// End-to-end workflows on SQLite and PostgreSQL: activities, timers, external events, all,
// N-way race (with a failing winner that throws), continue-as-new, sub-orchestrations,
// the client API and the activity context.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, until, backends } from './helpers.mjs'

const { Runtime, Client } = steadfast

function register(rt, attempts) {
  rt.registerActivity('Add', async (_ctx, { a, b }) => a + b)
  rt.registerActivity('Echo', async (_ctx, v) => v)
  rt.registerActivity('Fail', async (_ctx, why) => {
    throw new Error(`failed: ${why}`)
  })
  rt.registerActivity('Slow', async (ctx, ms) => {
    const end = Date.now() + ms
    while (Date.now() < end && !ctx.isCancelled()) await new Promise((r) => setTimeout(r, 10))
    return 'slow-done'
  })
  rt.registerActivity('FlakyTwice', async (ctx) => {
    const n = (attempts.get(ctx.instanceId) ?? 0) + 1
    attempts.set(ctx.instanceId, n)
    if (n < 3) throw new Error(`attempt ${n} failed`)
    return n
  })
  rt.registerActivity('Inspect', async (ctx, _input) => {
    ctx.traceInfo('inspecting')
    const status = await ctx.getClient().getStatus(ctx.instanceId)
    return {
      instanceId: ctx.instanceId,
      executionId: ctx.executionId,
      activityName: ctx.activityName,
      orchestrationName: ctx.orchestrationName,
      cancelled: ctx.isCancelled(),
      statusSeenByClient: status.status,
    }
  })

  rt.registerOrchestration('Onboard', function* (ctx, input) {
    const sum = yield ctx.scheduleActivity('Add', { a: input.a, b: input.b })
    yield ctx.scheduleTimer(30)
    ctx.setCustomStatus('awaiting-approval')
    const approval = yield ctx.waitForEvent('Approved')
    ctx.setValue('approvedBy', approval.by)
    return { sum, approval, kv: ctx.getValue('approvedBy'), status: ctx.getCustomStatus() }
  })

  rt.registerOrchestration('FanOut', function* (ctx) {
    return yield ctx.all([
      ctx.scheduleActivity('Echo', { n: 1 }),
      ctx.scheduleActivity('Fail', 'second'),
      ctx.scheduleTimer(10),
      ctx.scheduleActivity('Echo', 'text'),
    ])
  })

  rt.registerOrchestration('RaceFailingWinner', function* (ctx) {
    try {
      yield ctx.race(ctx.scheduleTimer(20_000), ctx.scheduleActivity('Fail', 'winner'), ctx.scheduleTimer(30_000), ctx.waitForEvent('never'))
      return 'not thrown'
    } catch (e) {
      return { caught: e.message, index: e.index }
    }
  })

  rt.registerOrchestration('RaceWinner', function* (ctx) {
    const first = yield ctx.race([ctx.scheduleTimer(20_000), ctx.scheduleTimer(25_000), ctx.scheduleActivity('Echo', { won: true })])
    const second = yield ctx.race(ctx.scheduleActivity('Slow', 1500), ctx.scheduleTimer(20))
    return { first, second }
  })

  rt.registerOrchestration('Counter', function* (ctx, n) {
    if (n < 3) {
      yield ctx.continueAsNew(n + 1)
    }
    return { n, executionId: ctx.executionId }
  })

  rt.registerOrchestration('Child', function* (ctx, x) {
    if (x < 0) throw new Error('negative input')
    return x + 1
  })

  rt.registerOrchestration('Parent', function* (ctx, x) {
    const a = yield ctx.scheduleSubOrchestration('Child', x)
    const b = yield ctx.scheduleSubOrchestration('Child', a, { instanceId: `${ctx.instanceId}-child` })
    let failure = null
    try {
      yield ctx.scheduleSubOrchestration('Child', -1)
    } catch (e) {
      failure = e.message
    }
    return { a, b, failure }
  })

  rt.registerOrchestration('Misc', function* (ctx) {
    const guid = yield ctx.newGuid()
    const now = yield ctx.utcNow()
    const retried = yield ctx.scheduleActivityWithRetry('FlakyTwice', null, { maxAttempts: 3, backoff: { kind: 'fixed', delayMs: 10 } })
    const info = yield ctx.scheduleActivity('Inspect', null)
    let badYield = null
    try {
      yield 42
    } catch (e) {
      badYield = e.code
    }
    return { guid, now, retried, info, badYield, replaying: ctx.isReplaying() }
  })

  rt.registerOrchestration('Boom', function* () {
    yield ctx_never()
  })

  rt.registerOrchestration('Isolated', function* (ctx, n) {
    ctx.setValue('me', ctx.instanceId)
    ctx.setCustomStatus(`n=${n}`)
    yield ctx.scheduleTimer(5 + (n % 3) * 10)
    const echoed = yield ctx.scheduleActivity('Echo', n)
    return { me: ctx.getValue('me'), status: ctx.getCustomStatus(), echoed }
  })

  rt.registerOrchestration('Waits', function* (ctx) {
    return yield ctx.waitForEvent('go')
  })
}

function ctx_never() {
  throw new Error('exploded before yielding')
}

for (const backend of backends('workflow')) {
  describe(`workflows on ${backend.name}`, { timeout: 120_000 }, () => {
    let env
    let rt
    let client
    const attempts = new Map()

    before(async () => {
      env = await backend.open()
      rt = new Runtime(env.provider, { ...FAST, orchestrationConcurrency: 2, workerConcurrency: 4 })
      register(rt, attempts)
      await rt.start()
      client = new Client(env.provider)
    })

    after(async () => {
      await rt?.shutdown(2000)
      await env?.cleanup()
    })

    test('activities, a timer and an external event', async () => {
      const id = uid('onboard')
      await client.startOrchestration(id, 'Onboard', { a: 2, b: 3 })
      // A positional event raised before its wait is bound is dropped: wait for the status
      // that is committed in the same turn as the wait.
      await until(async () => (await client.getStatus(id)).customStatus === 'awaiting-approval', 15_000, 'awaiting-approval')
      await client.raiseEvent(id, 'Approved', { by: 'ops' })
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.deepEqual(s.output, { sum: 5, approval: { by: 'ops' }, kv: 'ops', status: 'awaiting-approval' })
      const info = await client.getInstanceInfo(id)
      assert.equal(info.orchestrationName, 'Onboard')
      assert.equal(info.orchestrationVersion, '1.0.0')
      assert.equal(info.status, 'Completed')
      assert.ok((await client.listAllInstances()).includes(id))
    })

    test('all() returns ok/err per task in order', async () => {
      const id = uid('fanout')
      await client.startOrchestration(id, 'FanOut')
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.equal(s.output.length, 4)
      assert.deepEqual(s.output[0], { ok: { n: 1 } })
      assert.match(s.output[1].err, /failed: second/)
      assert.deepEqual(s.output[2], { ok: null })
      assert.deepEqual(s.output[3], { ok: 'text' })
    })

    test('a 4-way race whose winner failed throws into the generator', async () => {
      const id = uid('race-fail')
      await client.startOrchestration(id, 'RaceFailingWinner')
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.match(s.output.caught, /failed: winner/)
      assert.equal(s.output.index, 1)
    })

    test('a 3-way race returns {index, value}; losers are cancelled', async () => {
      const id = uid('race-win')
      await client.startOrchestration(id, 'RaceWinner')
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.deepEqual(s.output.first, { index: 2, value: { won: true } })
      assert.deepEqual(s.output.second, { index: 1, value: null })
    })

    test('continue-as-new starts new executions', async () => {
      const id = uid('counter')
      await client.startOrchestration(id, 'Counter', 0)
      const s = await until(async () => {
        const st = await client.getStatus(id)
        return st.status === 'Completed' || st.status === 'Failed' ? st : null
      }, 15_000, 'counter to finish')
      assert.equal(s.status, 'Completed', s.error)
      assert.deepEqual(s.output, { n: 3, executionId: 4 })
      assert.equal((await client.getInstanceInfo(id)).currentExecutionId, 4)
    })

    test('sub-orchestrations return values and throw their failures', async () => {
      const id = uid('parent')
      await client.startOrchestration(id, 'Parent', 10)
      const s = await client.waitForOrchestration(id, 20_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.equal(s.output.a, 11)
      assert.equal(s.output.b, 12)
      assert.match(s.output.failure, /negative input/)
      const child = await client.getStatus(`${id}-child`)
      assert.equal(child.status, 'Completed')
      assert.equal(child.output, 12)
    })

    test('newGuid, utcNow, retries, the activity context and bad yields', async () => {
      const id = uid('misc')
      const before = Date.now()
      await client.startOrchestration(id, 'Misc')
      const s = await client.waitForOrchestration(id, 20_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.match(s.output.guid, /^[0-9a-f-]{36}$/)
      assert.ok(s.output.now >= before - 5000 && s.output.now <= Date.now() + 5000)
      assert.equal(s.output.retried, 3)
      assert.deepEqual(s.output.info, {
        instanceId: id,
        executionId: 1,
        activityName: 'Inspect',
        orchestrationName: 'Misc',
        cancelled: false,
        statusSeenByClient: 'Running',
      })
      assert.equal(s.output.badYield, 'ERR_INVALID_ARG_TYPE')
      assert.equal(typeof s.output.replaying, 'boolean')
    })

    test('an exception escaping the generator fails the instance', async () => {
      const id = uid('boom')
      await client.startOrchestration(id, 'Boom')
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Failed')
      assert.match(s.error, /exploded before yielding/)
      assert.equal(s.errorCategory, 'application')
    })

    test('client: timeouts, cancellation and deletion', async () => {
      const id = uid('waits')
      await client.startOrchestration(id, 'Waits')
      await assert.rejects(client.waitForOrchestration(id, 200), (e) => e.code === 'ERR_STEADFAST_TIMEOUT')
      await client.cancelInstance(id, 'no longer needed')
      const s = await client.waitForOrchestration(id, 15_000)
      assert.equal(s.status, 'Failed')
      assert.match(s.error, /no longer needed/)
      const del = await client.deleteInstance(id)
      assert.equal(del.instancesDeleted, 1)
      assert.equal((await client.getStatus(id)).status, 'NotFound')
      await assert.rejects(client.getInstanceInfo(id), (e) => e.code === 'ERR_STEADFAST_NOT_FOUND' || e.code === 'ERR_STEADFAST_PROVIDER')
    })

    test('concurrent instances never see each other\'s context', async () => {
      const ids = Array.from({ length: 8 }, () => uid('iso'))
      await Promise.all(ids.map((id, n) => client.startOrchestration(id, 'Isolated', n)))
      const results = await Promise.all(ids.map((id) => client.waitForOrchestration(id, 20_000)))
      results.forEach((s, n) => {
        assert.equal(s.status, 'Completed', s.error)
        assert.deepEqual(s.output, { me: ids[n], status: `n=${n}`, echoed: n })
      })
    })

    test('metrics are reported while running', () => {
      const m = rt.metricsSnapshot()
      assert.ok(m)
      assert.ok(m.orchStarts >= 1)
      assert.ok(m.activitySuccess >= 1)
    })
  })
}
