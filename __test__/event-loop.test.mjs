// The event-loop watch (option eventLoopStallMs), in one process: while the event loop does
// not answer, the runtime refuses lease renewals and fetches; an activity duroxide gives up
// because its renewal was refused is not acked away (its work item would be deleted while its
// lease still ran, and the orchestration would wait for it for ever) but redelivered; the
// stall is reported as eventLoopStalled once the loop answers. The two-process case is in
// hung-process.test.mjs.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, until, backends, sleep } from './helpers.mjs'

const { Runtime, Client } = steadfast

/** Block this thread (and so the event loop) for `ms`. */
function blockEventLoop(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

for (const backend of backends('event_loop')) {
  describe(`event-loop watch on ${backend.name}`, { timeout: 120_000 }, () => {
    test('an activity running when the loop stalls is redelivered, not acked away; the stall is reported', async () => {
      const env = await backend.open()
      // The renewal comes 2 s after the claim, the lease runs 4 s: duroxide gives the
      // activity up at the refused renewal while its lease still has 2 s to run.
      const rt = new Runtime(env.provider, {
        ...FAST,
        workerLockTimeoutMs: 4000,
        workerLockRenewalBufferMs: 3000,
        activityCancellationGracePeriodMs: 100,
        eventLoopStallMs: 300,
      })
      const stalls = []
      const diagnostics = []
      rt.on('eventLoopStalled', (d) => stalls.push(d))
      rt.on('diagnostic', (d) => diagnostics.push(d))
      let runs = 0
      rt.registerActivity('Slow', async () => {
        runs++
        await sleep(200)
        return `run ${runs}`
      })
      rt.registerOrchestration('OneSlowStep', function* (ctx) {
        return yield ctx.scheduleActivity('Slow', null)
      })
      await rt.start()
      try {
        const client = new Client(env.provider)
        const id = uid('stall')
        await client.startOrchestration(id, 'OneSlowStep', null)
        await until(() => runs === 1, 20_000, 'the activity to start')
        blockEventLoop(5000)
        const st = await client.waitForOrchestration(id, 30_000)
        assert.equal(st.status, 'Completed', JSON.stringify(st))
        assert.equal(st.output, 'run 2', 'the given-up run left its work item for a second run')
        const report = await until(() => stalls[0], 5000, 'eventLoopStalled')
        assert.deepEqual(Object.keys(report).sort(), ['acksRefused', 'at', 'fetchesRefused', 'kind', 'reason', 'renewalsRefused', 'source', 'stalledMs', 'thresholdMs'])
        assert.equal(report.kind, 'eventLoopStalled')
        assert.equal(report.thresholdMs, 300)
        assert.equal(report.source, 'runtime')
        assert.ok(report.stalledMs >= 4500 && report.stalledMs < 60_000, `stalledMs ${report.stalledMs}`)
        assert.ok(report.renewalsRefused >= 1, `renewalsRefused ${report.renewalsRefused}`)
        assert.ok(report.fetchesRefused >= 1, `fetchesRefused ${report.fetchesRefused}`)
        assert.equal(report.acksRefused, 1)
        assert.ok(Math.abs(report.at - Date.now()) < 60_000, `at ${report.at}`)
        assert.match(report.reason, /did not answer for \d+ ms \(eventLoopStallMs 300\)/)
        assert.ok(diagnostics.includes(report), 'also emitted as diagnostic')
        assert.equal(stalls.length, 1, 'one report per stall')
      } finally {
        await rt.shutdown()
        await env.cleanup()
      }
    })
  })
}

test('eventLoopStallMs 0 turns the watch off', { timeout: 60_000 }, async () => {
  const [sqlite] = backends('event_loop_off')
  const env = await sqlite.open()
  const rt = new Runtime(env.provider, { ...FAST, eventLoopStallMs: 0 })
  const events = []
  rt.on('diagnostic', (d) => events.push(d))
  rt.registerOrchestration('Noop', function* () {
    return 1
  })
  await rt.start()
  try {
    blockEventLoop(1000)
    const client = new Client(env.provider)
    const id = uid('off')
    await client.startOrchestration(id, 'Noop', null)
    assert.equal((await client.waitForOrchestration(id, 10_000)).status, 'Completed')
    await sleep(200)
    assert.deepEqual(events, [])
  } finally {
    await rt.shutdown()
    await env.cleanup()
  }
})

test('eventLoopStallMs is checked: 0 (off) or at least 100', async () => {
  const [sqlite] = backends('event_loop_opts')
  const env = await sqlite.open()
  try {
    assert.throws(() => new Runtime(env.provider, { eventLoopStallMs: 50 }), { name: 'RangeError', message: /options\.eventLoopStallMs must be 0 \(off\) or at least 100 \(got 50\)/ })
    assert.throws(() => new Runtime(env.provider, { eventLoopStallMs: -1 }), RangeError)
    assert.throws(() => new Runtime(env.provider, { eventLoopStallMs: '1000' }), TypeError)
    new Runtime(env.provider, { eventLoopStallMs: 100 })
  } finally {
    await env.cleanup()
  }
})
