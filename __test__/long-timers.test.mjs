// Durable timers longer than 2^32 ms (about 49.7 days): a 60-day timer is scheduled with its
// fire time 60 days out, and the instance keeps working while it runs (here an event wins
// the race against it), on SQLite and PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, uid, until, backends, runtimeOn } from './helpers.mjs'

const DAY_MS = 24 * 3600 * 1000

for (const backend of backends('timers')) {
  describe(`long timers on ${backend.name}`, { timeout: 120_000 }, () => {
    const fx = runtimeOn(backend, FAST, (rt) => {
      rt.registerOrchestration('SixtyDays', function* (ctx) {
        const winner = yield ctx.race(ctx.scheduleTimer(60 * DAY_MS), ctx.waitForEvent('go'))
        return winner
      })
    })

    test('a 60-day timer fires 60 days out and does not hold the instance up', async () => {
      const id = uid('sixty')
      const began = Date.now()
      await fx.client.startOrchestration(id, 'SixtyDays', null)
      const created = await until(async () => {
        const events = await fx.client.readExecutionHistory(id, 1).catch(() => [])
        return events.find((e) => e.kind === 'TimerCreated')
      }, 15_000, 'the timer to be created')
      const fireAt = JSON.parse(created.data).fireAtMs
      assert.ok(Math.abs(fireAt - (began + 60 * DAY_MS)) < 60_000, `fires 60 days out: ${fireAt - began} ms`)
      await until(async () => (await fx.client.getStatus(id)).status === 'Running', 15_000, 'the instance to wait')
      await fx.client.raiseEvent(id, 'go', 'now')
      const st = await fx.client.waitForOrchestration(id, 30_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.deepEqual(st.output, { index: 1, value: 'now' })
    })
  })
}
