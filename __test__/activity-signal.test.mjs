// An activity's ctx.signal aborts when duroxide cancels the activity: here the activity
// loses a race to a timer, its orchestration completes, and the activity, which waits on
// nothing but its signal, sees the abort and its reason, on SQLite and PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, uid, until, backends, runtimeOn } from './helpers.mjs'

for (const backend of backends('signal')) {
  describe(`activity cancellation on ${backend.name}`, { timeout: 120_000 }, () => {
    /** instance id -> what its activity saw of ctx.signal */
    const seen = new Map()

    const fx = runtimeOn(backend, { ...FAST, workerLockTimeoutMs: 2000, workerLockRenewalBufferMs: 1000 }, (rt) => {
      rt.registerActivity('UntilAborted', (ctx) => {
        seen.set(ctx.instanceId, { abortedAtStart: ctx.signal.aborted })
        return new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            const { reason } = ctx.signal
            seen.set(ctx.instanceId, { ...seen.get(ctx.instanceId), reason: { name: reason.name, code: reason.code, message: reason.message } })
            resolve('stopped')
          })
        })
      })
      rt.registerOrchestration('LosesARace', function* (ctx) {
        const winner = yield ctx.race(ctx.scheduleActivity('UntilAborted', null), ctx.scheduleTimer(50))
        return winner.index
      })
    })

    test('the losing activity sees its signal abort, with the reason', async () => {
      const id = uid('race')
      await fx.client.startOrchestration(id, 'LosesARace', null)
      const st = await fx.client.waitForOrchestration(id, 30_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.equal(st.output, 1, 'the timer won')
      const saw = await until(() => seen.get(id)?.reason && seen.get(id), 30_000, 'the activity to see its signal abort')
      assert.equal(saw.abortedAtStart, false)
      assert.deepEqual(saw.reason, {
        name: 'AbortError',
        code: 'ERR_STEADFAST_ACTIVITY_CANCELLED',
        message: 'the activity was cancelled: its orchestration no longer needs it, or its lease was lost',
      })
    })
  })
}
