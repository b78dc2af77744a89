// Durable timers longer than 2^32 ms (about 49.7 days): a 60-day timer is scheduled with its
// fire time 60 days out, and the instance keeps working while it runs (here an event wins
// the race against it), on SQLite and PostgreSQL.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, until, backends } from './helpers.mjs'

const { Runtime, Client } = steadfast

const DAY_MS = 24 * 3600 * 1000

for (const backend of backends('timers')) {
  describe(`long timers on ${backend.name}`, { timeout: 120_000 }, () => {
    let env
    let rt
    let client

    before(async () => {
      env = await backend.open()
      rt = new Runtime(env.provider, FAST)
      rt.registerOrchestration('SixtyDays', function* (ctx) {
        const winner = yield ctx.race(ctx.scheduleTimer(60 * DAY_MS), ctx.waitForEvent('go'))
        return winner
      })
      await rt.start()
      client = new Client(env.provider)
    })

    after(async () => {
      await rt?.shutdown(2000)
      await env?.cleanup()
    })

    test('a 60-day timer fires 60 days out and does not hold the instance up', async () => {
      const id = uid('sixty')
      const began = Date.now()
      await client.startOrchestration(id, 'SixtyDays', null)
      const created = await until(async () => {
        const events = await client.readExecutionHistory(id, 1).catch(() => [])
        return events.find((e) => e.kind === 'TimerCreated')
      }, 15_000, 'the timer to be created')
      const fireAt = JSON.parse(created.data).fireAtMs
      assert.ok(Math.abs(fireAt - (began + 60 * DAY_MS)) < 60_000, `fires 60 days out: ${fireAt - began} ms`)
      await until(async () => (await client.getStatus(id)).status === 'Running', 15_000, 'the instance to wait')
      await client.raiseEvent(id, 'go', 'now')
      const st = await client.waitForOrchestration(id, 30_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.deepEqual(st.output, { index: 1, value: 'now' })
    })
  })
}
