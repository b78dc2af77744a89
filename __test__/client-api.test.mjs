// Every Client operation beyond start/raise/cancel/wait, for real on SQLite and PostgreSQL:
// KV reads, status changes, queue messages, metrics, queue depths, stats, listings,
// executions, history, instance trees, deletion (single and bulk), pruning, typed aliases.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, until, backends } from './helpers.mjs'

const { Runtime, Client, SteadfastError, OrchestrationContext } = steadfast

const WAIT_MS = 60_000

function register(rt) {
  rt.registerActivity('Echo', async (_ctx, v) => v)

  // Custom status and KV in the turn that starts waiting for 'go', more after it.
  rt.registerOrchestration('Stepper', function* (ctx) {
    ctx.setValue('color', 'blue')
    ctx.setCustomStatus('step-1')
    const go = yield ctx.waitForEvent('go')
    ctx.setValue('size', JSON.stringify(go))
    ctx.setCustomStatus('step-2')
    return { done: true, go }
  })

  rt.registerOrchestration('Counter', function* (ctx, n) {
    if (n < 2) yield ctx.continueAsNew(n + 1)
    return n
  })

  rt.registerOrchestration('UseActivity', function* (ctx, input) {
    return yield ctx.scheduleActivity('Echo', input)
  })

  rt.registerOrchestration('Child', function* (ctx, x) {
    return x * 2
  })

  rt.registerOrchestration('Parent', function* (ctx, x) {
    return yield ctx.scheduleSubOrchestrationWithId('Child', `${ctx.instanceId}-child`, x)
  })

  rt.registerOrchestration('Fails', function* () {
    throw new Error('boom')
  })

  rt.registerOrchestration('Waits', function* (ctx) {
    return yield ctx.waitForEvent('never')
  })

  if (typeof OrchestrationContext.prototype.dequeueEvent === 'function') {
    rt.registerOrchestration('Dequeues', function* (ctx) {
      ctx.setCustomStatus('subscribed')
      const a = yield ctx.dequeueEvent('inbox')
      const b = yield ctx.dequeueEvent('inbox')
      return [a, b]
    })
  }
}

async function rejectsWith(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof SteadfastError, `expected SteadfastError, got ${e}`)
    assert.equal(e.code, code, e.message)
    if (pattern) assert.match(e.message, pattern)
    return true
  })
}

for (const backend of backends('client')) {
  describe(`client API on ${backend.name}`, { timeout: 240_000 }, () => {
    let live // store with a runtime
    let idle // store without one: what a call writes stays visible
    let rt
    let client
    let idleClient

    before(async () => {
      live = await backend.open()
      idle = await backend.open()
      rt = new Runtime(live.provider, { ...FAST, orchestrationConcurrency: 2, workerConcurrency: 2 })
      register(rt)
      await rt.start()
      client = new Client(live.provider)
      idleClient = new Client(idle.provider)
    })

    after(async () => {
      await rt?.shutdown(2000)
      await live?.cleanup()
      await idle?.cleanup()
    })

    test('status changes, custom status and KV reads', async () => {
      const id = uid('stepper')
      await client.startOrchestration(id, 'Stepper')
      const first = await client.waitForStatusChange(id, 0, 20, WAIT_MS)
      assert.equal(first.status, 'Running')
      assert.equal(first.customStatus, 'step-1')
      assert.ok(first.customStatusVersion >= 1, `version ${first.customStatusVersion}`)

      assert.equal(await client.waitForValue(id, 'color', WAIT_MS), 'blue')
      assert.equal(await client.getValue(id, 'color'), 'blue')
      assert.equal(await client.getValue(id, 'missing'), null)
      assert.deepEqual(await client.getKvAllValues(id), { color: 'blue' })
      await rejectsWith(client.waitForValue(id, 'missing', 100), 'ERR_STEADFAST_TIMEOUT', /Timed out waiting for value 'missing' on instance/)
      // Nothing changes while it waits for 'go'.
      await rejectsWith(client.waitForStatusChange(id, first.customStatusVersion, 20, 300), 'ERR_STEADFAST_TIMEOUT')

      await client.raiseEventTyped(id, 'go', { size: 'L' })
      const output = await client.waitForOrchestrationTyped(id, WAIT_MS)
      assert.deepEqual(output, { done: true, go: { size: 'L' } })
      const done = await client.waitForStatusChange(id, first.customStatusVersion, 20, WAIT_MS)
      assert.equal(done.status, 'Completed')
      assert.equal(done.customStatus, 'step-2')
      assert.ok(done.customStatusVersion > first.customStatusVersion)
      assert.deepEqual(done.output, { done: true, go: { size: 'L' } })
      assert.deepEqual(await client.getKvAllValues(id), { color: 'blue', size: '{"size":"L"}' })
      assert.deepEqual(await client.getKvAllValues(uid('unknown')), {})

      const stats = await client.getOrchestrationStats(id)
      assert.ok(stats.historyEventCount >= 4, JSON.stringify(stats))
      assert.ok(stats.historySizeBytes > 0)
      assert.equal(stats.kvUserKeyCount, 2)
      assert.equal(stats.kvTotalValueBytes, 'blue'.length + '{"size":"L"}'.length)
      assert.equal(typeof stats.queuePendingCount, 'number')
      assert.equal(await client.getOrchestrationStats(uid('unknown')), null)
    })

    test('start, raise, enqueue and cancel write one queue message each', async () => {
      const zero = await idleClient.getQueueDepths()
      assert.deepEqual(zero, { orchestratorQueue: 0, workerQueue: 0, timerQueue: 0 })
      const id = uid('idle')
      await idleClient.startOrchestrationTyped(id, 'Stepper', { x: 1 })
      await idleClient.raiseEvent(id, 'go', 1)
      await idleClient.enqueueEvent(id, 'inbox', { n: 1 })
      await idleClient.enqueueEventTyped(id, 'inbox', [2])
      await idleClient.cancelInstance(id, 'because')
      await idleClient.startOrchestrationVersionedTyped(uid('idle-v'), 'Stepper', null, '1.0.0')
      assert.deepEqual(await idleClient.getQueueDepths(), { orchestratorQueue: 6, workerQueue: 0, timerQueue: 0 })
      assert.deepEqual(await idleClient.getSystemMetrics(), {
        totalInstances: 0,
        totalExecutions: 0,
        runningInstances: 0,
        completedInstances: 0,
        failedInstances: 0,
        totalEvents: 0,
      })
    })

    test('enqueued messages reach ctx.dequeueEvent in order', { skip: typeof OrchestrationContext.prototype.dequeueEvent !== 'function' && 'ctx.dequeueEvent is not in this build' }, async () => {
      const id = uid('dequeue')
      // Queue messages wait for their subscriber (the start is not waited for), but a message
      // sent before the instance exists is dropped by the runtime, so the start comes first.
      await client.startOrchestration(id, 'Dequeues')
      await client.enqueueEvent(id, 'inbox', { first: true })
      await client.enqueueEvent(id, 'inbox', 'second')
      const s = await client.waitForOrchestration(id, WAIT_MS)
      assert.equal(s.status, 'Completed', s.error)
      assert.deepEqual(s.output, [{ first: true }, 'second'])
    })

    test('metrics and listings by status', async () => {
      const ok = uid('ok')
      const bad = uid('bad')
      const waiting = uid('waiting')
      await client.startOrchestration(ok, 'UseActivity', 1)
      await client.startOrchestration(bad, 'Fails')
      await client.startOrchestration(waiting, 'Waits')
      assert.equal(await client.waitForOrchestrationTyped(ok, WAIT_MS), 1)
      await rejectsWith(client.waitForOrchestrationTyped(bad, WAIT_MS), 'ERR_STEADFAST_ORCHESTRATION_FAILED', /boom/)
      await until(async () => (await client.listInstancesByStatus('Running')).includes(waiting), WAIT_MS, 'waiting instance running')

      const completed = await client.listInstancesByStatus('Completed')
      const failed = await client.listInstancesByStatus('Failed')
      const running = await client.listInstancesByStatus('Running')
      assert.ok(completed.includes(ok) && !completed.includes(bad) && !completed.includes(waiting))
      assert.ok(failed.includes(bad) && !failed.includes(ok))
      assert.ok(running.includes(waiting) && !running.includes(ok))
      assert.deepEqual(await client.listInstancesByStatus('ContinuedAsNew'), [])

      const all = await client.listAllInstances()
      for (const id of [ok, bad, waiting]) assert.ok(all.includes(id), id)
      const m = await client.getSystemMetrics()
      assert.equal(m.totalInstances, all.length)
      assert.ok(m.completedInstances >= completed.length, JSON.stringify(m))
      assert.ok(m.failedInstances >= 1 && m.runningInstances >= 1, JSON.stringify(m))
      assert.ok(m.totalExecutions >= m.totalInstances && m.totalEvents > m.totalInstances, JSON.stringify(m))
      const d = await client.getQueueDepths()
      for (const k of ['orchestratorQueue', 'workerQueue', 'timerQueue']) assert.ok(Number.isInteger(d[k]) && d[k] >= 0, k)
      await client.cancelInstance(waiting, 'test over')
      const s = await client.waitForOrchestration(waiting, WAIT_MS)
      assert.equal(s.status, 'Failed')
      assert.match(s.error, /test over/)
    })

    test('executions, execution info, history and pruning', async () => {
      const id = uid('counter')
      await client.startOrchestration(id, 'Counter', 0)
      assert.equal(await client.waitForOrchestrationTyped(id, WAIT_MS), 2)
      assert.deepEqual(await client.listExecutions(id), [1, 2, 3])
      assert.deepEqual(await client.listExecutions(uid('unknown')), [])
      assert.equal((await client.getInstanceInfo(id)).currentExecutionId, 3)

      const e1 = await client.getExecutionInfo(id, 1)
      assert.equal(e1.executionId, 1)
      assert.equal(e1.status, 'ContinuedAsNew')
      assert.equal(e1.output, 1, 'the next input, parsed')
      assert.ok(e1.completedAt >= e1.startedAt && e1.eventCount >= 2, JSON.stringify(e1))
      const e3 = await client.getExecutionInfo(id, 3)
      assert.equal(e3.status, 'Completed')
      assert.equal(e3.output, 2)
      await assert.rejects(client.getExecutionInfo(id, 99), SteadfastError)

      const h1 = await client.readExecutionHistory(id, 1)
      assert.equal(h1[0].kind, 'OrchestrationStarted')
      assert.deepEqual(JSON.parse(h1[0].data), { name: 'Counter', version: '1.0.0', input: 0 })
      assert.equal(h1.at(-1).kind, 'OrchestrationContinuedAsNew')
      assert.deepEqual(JSON.parse(h1.at(-1).data), { input: 1 })
      assert.equal(h1.length, e1.eventCount)
      const h3 = await client.readExecutionHistory(id, 3)
      assert.equal(h3.at(-1).kind, 'OrchestrationCompleted')
      assert.equal(JSON.parse(h3.at(-1).data), 2)

      // Prune keeps the newest executions and never the current one.
      const kept2 = await client.pruneExecutions(id, { keepLast: 2 })
      assert.equal(kept2.instancesProcessed, 1)
      assert.equal(kept2.executionsDeleted, 1)
      assert.equal(kept2.eventsDeleted, h1.length)
      assert.deepEqual(await client.listExecutions(id), [2, 3])
      const bulk = await client.pruneExecutionsBulk({ instanceIds: [id] })
      assert.equal(bulk.executionsDeleted, 1)
      assert.deepEqual(await client.listExecutions(id), [3])
      const none = await client.pruneExecutions(id)
      assert.equal(none.executionsDeleted, 0)
      assert.equal((await client.getStatus(id)).output, 2)
    })

    test('activity history: scheduled and completed events are linked', async () => {
      const id = uid('activity')
      await client.startOrchestration(id, 'UseActivity', { text: 'he said "hi"' })
      assert.deepEqual(await client.waitForOrchestrationTyped(id, WAIT_MS), { text: 'he said "hi"' })
      const history = await client.readExecutionHistory(id, 1)
      for (const e of history) {
        assert.ok(Number.isInteger(e.eventId) && e.timestampMs > 0, JSON.stringify(e))
        if (e.data !== undefined) JSON.parse(e.data) // always valid JSON
      }
      const scheduled = history.find((e) => e.kind === 'ActivityScheduled')
      const completed = history.find((e) => e.kind === 'ActivityCompleted')
      assert.deepEqual(JSON.parse(scheduled.data), { name: 'Echo', input: { text: 'he said "hi"' } })
      assert.equal(completed.sourceEventId, scheduled.eventId)
      assert.deepEqual(JSON.parse(completed.data), { text: 'he said "hi"' })
    })

    test('instance trees and deletion rules', async () => {
      const parent = uid('parent')
      const child = `${parent}-child`
      await client.startOrchestration(parent, 'Parent', 21)
      assert.equal(await client.waitForOrchestrationTyped(parent, WAIT_MS), 42)
      const tree = await client.getInstanceTree(parent)
      assert.equal(tree.rootId, parent)
      assert.deepEqual([...tree.allIds].sort(), [parent, child].sort())
      assert.equal(tree.size, 2)
      assert.equal((await client.getInstanceInfo(child)).parentInstanceId, parent)

      await rejectsWith(client.deleteInstance(child), 'ERR_STEADFAST_INVALID_ARGUMENT', /sub-orchestration/)
      await rejectsWith(client.deleteInstance(uid('unknown')), 'ERR_STEADFAST_NOT_FOUND')
      const waiting = uid('waiting')
      await client.startOrchestration(waiting, 'Waits')
      await until(async () => (await client.getStatus(waiting)).status === 'Running', WAIT_MS, 'running')
      await rejectsWith(client.deleteInstance(waiting), 'ERR_STEADFAST_INSTANCE_RUNNING')

      // Bulk delete skips running instances and honours completedBefore.
      assert.equal((await client.deleteInstanceBulk({ instanceIds: [parent], completedBefore: 1 })).instancesDeleted, 0)
      const r = await client.deleteInstanceBulk({ instanceIds: [parent, waiting], limit: 10 })
      assert.equal(r.instancesDeleted, 2, JSON.stringify(r)) // the parent and its child
      assert.ok(r.executionsDeleted >= 2 && r.eventsDeleted > 0, JSON.stringify(r))
      const left = await client.listAllInstances()
      assert.ok(!left.includes(parent) && !left.includes(child) && left.includes(waiting))

      const forced = await client.deleteInstance(waiting, true)
      assert.equal(forced.instancesDeleted, 1)
      assert.equal((await client.getStatus(waiting)).status, 'NotFound')
    })

    test('typed aliases and versioned starts', async () => {
      const id = uid('typed')
      await client.startOrchestrationVersionedTyped(id, 'UseActivity', [1, 'two'], '1.0.0')
      assert.deepEqual(await client.waitForOrchestrationTyped(id, WAIT_MS), [1, 'two'])
      assert.equal((await client.getInstanceInfo(id)).orchestrationVersion, '1.0.0')
      await rejectsWith(client.waitForOrchestrationTyped(uid('never-started'), 50), 'ERR_STEADFAST_TIMEOUT')
    })

    test('starting an id that exists is accepted and changes nothing', async () => {
      const id = uid('dup')
      await client.startOrchestration(id, 'UseActivity', 'first')
      assert.equal(await client.waitForOrchestrationTyped(id, WAIT_MS), 'first')
      await client.startOrchestration(id, 'UseActivity', 'second')
      await until(async () => (await client.getQueueDepths()).orchestratorQueue === 0, WAIT_MS, 'duplicate start consumed')
      assert.equal(await client.waitForOrchestrationTyped(id, WAIT_MS), 'first')
      assert.deepEqual(await client.listExecutions(id), [1])
    })
  })
}

test('MAX_* constants mirror duroxide runtime::limits', () => {
  assert.equal(steadfast.MAX_WORKER_TAGS, 5)
  assert.equal(steadfast.MAX_TAG_NAME_BYTES, 256)
  assert.equal(steadfast.MAX_KV_KEYS, 150)
  assert.equal(steadfast.MAX_KV_VALUE_BYTES, 65_536)
  assert.equal(steadfast.MAX_CUSTOM_STATUS_BYTES, 262_144)
})
