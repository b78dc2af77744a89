// Poison diagnostics: an activity nobody can run is redelivered until its attempt count passes
// maxAttempts; the runtime fails it as poison and the Runtime emits `poisoned` (and
// `diagnostic`). On SQLite the source is the binding's provider wrapper, on PostgreSQL
// steadfast-pg's diagnostics stream. A throwing listener must not crash the process.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, backends } from './helpers.mjs'

const { Runtime, Client } = steadfast

for (const backend of backends('poison')) {
  describe(`poison diagnostics on ${backend.name}`, { timeout: 60_000 }, () => {
    let env
    let rt
    let client
    const events = []
    const diagnostics = []
    const warnings = []
    const onWarning = (w) => warnings.push(w)

    before(async () => {
      process.on('warning', onWarning)
      env = await backend.open()
      rt = new Runtime(env.provider, {
        ...FAST,
        maxAttempts: 2,
        unregisteredBackoffBaseMs: 10,
        unregisteredBackoffMaxMs: 50,
        redeliveryBackoffBaseMs: 10,
        redeliveryBackoffCapMs: 100,
      })
      rt.on('poisoned', (e) => events.push(e))
      rt.on('diagnostic', (e) => diagnostics.push(e))
      // Listeners that throw or reject must not take the process down.
      rt.on('poisoned', () => {
        throw new Error('listener blew up')
      })
      rt.on('poisoned', async () => {
        throw new Error('async listener blew up')
      })
      rt.registerOrchestration('CallsMissing', function* (ctx) {
        yield ctx.scheduleActivity('NobodyRunsThis', 'payload')
        return 'unexpected'
      })
      await rt.start()
      client = new Client(env.provider)
    })

    after(async () => {
      process.off('warning', onWarning)
      await rt?.shutdown(2000)
      await env?.cleanup()
    })

    test('an activity past maxAttempts is poisoned and reported', async () => {
      const id = uid('poison')
      await client.startOrchestration(id, 'CallsMissing')
      const s = await client.waitForOrchestration(id, 30_000)
      // Poison is a system error: it aborts the turn instead of reaching the generator.
      assert.equal(s.status, 'Failed')
      assert.equal(s.errorCategory, 'poison')
      assert.match(s.error, /NobodyRunsThis.*exceeded 3 attempts \(max 2\)/)

      const deadline = Date.now() + 5000
      while (!events.some((e) => e.instanceId === id) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20))
      }
      const e = events.find((ev) => ev.instanceId === id)
      assert.ok(e, `no poisoned event; diagnostics seen: ${JSON.stringify(diagnostics)}`)
      assert.equal(e.kind, 'poisoned')
      assert.equal(e.queue, 'worker')
      assert.equal(e.executionId, 1)
      assert.equal(e.maxAttempts, 2)
      assert.equal(e.attemptCount, 3)
      assert.equal(typeof e.reason, 'string')
      assert.ok(Math.abs(e.at - Date.now()) < 60_000)
      assert.equal(e.source, backend.name === 'sqlite' ? 'runtime' : 'provider')
      assert.ok(diagnostics.some((d) => d.kind === 'poisoned' && d.instanceId === id))
      assert.equal(events.filter((ev) => ev.instanceId === id).length, 1, 'reported exactly once')

      await new Promise((r) => setTimeout(r, 50))
      assert.ok(warnings.some((w) => w.code === 'STEADFAST_LISTENER_ERROR' && /listener blew up/.test(w.message)))
      assert.ok(warnings.some((w) => /async listener blew up/.test(w.message)))
      const m = rt.metricsSnapshot()
      assert.ok(m.activityPoison >= 1)
    })
  })
}
