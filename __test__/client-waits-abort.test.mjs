// Client waits end on an AbortSignal: they reject with the signal's reason as soon as it
// aborts (the native wait ends then, not at its timeout), at once for a signal already
// aborted, and a signal that never aborts changes nothing; on SQLite and PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { steadfast, FAST, uid, until, backends, runtimeOn } from './helpers.mjs'

/** Longer than any test here may take: a wait that settles sooner was ended by its signal. */
const LONG_MS = 600_000

/** Start `wait(signal)`, abort after `afterMs`; the rejection and how long it took. */
async function abortAfter(afterMs, wait) {
  const controller = new AbortController()
  const reason = new Error('the caller gave up')
  const began = Date.now()
  const settled = wait(controller.signal).then(
    () => ({ resolved: true }),
    (error) => ({ error, ms: Date.now() - began }),
  )
  setTimeout(() => controller.abort(reason), afterMs)
  return { ...(await settled), reason }
}

for (const backend of backends('waitabort')) {
  describe(`aborting client waits on ${backend.name}`, { timeout: 120_000 }, () => {
    const fx = runtimeOn(backend, FAST, (rt) => {
      rt.registerOrchestration('WaitsForGo', function* (ctx) {
        return yield ctx.waitForEvent('go')
      })
    })

    test('each wait rejects with the signal reason once it aborts', async () => {
      const id = uid('abort')
      await fx.client.startOrchestration(id, 'WaitsForGo', null)
      await until(async () => (await fx.client.getStatus(id)).status === 'Running', 15_000, 'the instance to run')
      const waits = {
        waitForOrchestration: (signal) => fx.client.waitForOrchestration(id, LONG_MS, { signal }),
        waitForOrchestrationTyped: (signal) => fx.client.waitForOrchestrationTyped(id, LONG_MS, { signal }),
        waitForStatusChange: (signal) => fx.client.waitForStatusChange(id, 1_000_000, 10, LONG_MS, { signal }),
        waitForValue: (signal) => fx.client.waitForValue(id, 'never', LONG_MS, { signal }),
      }
      for (const [name, wait] of Object.entries(waits)) {
        const out = await abortAfter(200, wait)
        assert.equal(out.resolved, undefined, `${name} did not resolve`)
        assert.equal(out.error, out.reason, `${name} rejects with the signal's reason`)
        assert.ok(out.ms < LONG_MS / 10, `${name} ended by the abort, not its timeout (${out.ms} ms)`)
      }
      await fx.client.raiseEvent(id, 'go', 'done')
      assert.equal((await fx.client.waitForOrchestration(id, 30_000, { signal: new AbortController().signal })).output, 'done')
    })

    test('an aborted signal rejects at once; bad options are named', async () => {
      const reason = new Error('already gone')
      await assert.rejects(fx.client.waitForOrchestration(uid('none'), 1000, { signal: AbortSignal.abort(reason) }), (e) => e === reason)
      await assert.rejects(fx.client.waitForOrchestration('x', 1000, { signal: 1 }), /options\.signal must be an AbortSignal/)
      await assert.rejects(fx.client.waitForValue('x', 'k', 1000, { sigal: new AbortController().signal }), /options\.sigal is not a known option/)
      await assert.rejects(fx.client.waitForOrchestration('x', 1000, null), /options must be an object/)
    })
  })
}

test("a worker thread's waits and the main thread's never share an id", { timeout: 120_000 }, async () => {
  // The main thread's wait is registered first; the worker then registers, aborts and ends
  // its own. Were both numbered by a per-thread counter, they would be wait 1 twice, the
  // worker's end would drop the main thread's registration, and the abort below would be lost.
  const client = new steadfast.Client(await steadfast.SqliteProvider.inMemory())
  const out = abortAfter(1000, (signal) => client.waitForValue('nobody', 'never', LONG_MS, { signal }))
  const worker = new Worker(new URL('./fixtures/abort-wait-worker.mjs', import.meta.url))
  const workerSaw = await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject))
  await worker.terminate()
  assert.equal(workerSaw, 'aborted')
  const { error, reason, ms } = await out
  assert.equal(error, reason, "the main thread's wait ends on its own abort")
  assert.ok(ms < LONG_MS / 10, `ended by the abort, not its timeout (${ms} ms)`)
})
