// Client.startOrchestration(..., { ifExists: 'throw' }): a start of an id that exists rejects
// with ERR_STEADFAST_INSTANCE_EXISTS, where the default ignores it. Events to an id nobody
// started do not make it exist; a deleted id can be started again; on PostgreSQL an id exists
// from its first enqueued start on, and of concurrent exclusive starts of one id exactly one
// succeeds (on SQLite an id counts once its first turn ran).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, uid, backends, runtimeOn, steadfast } from './helpers.mjs'

const { SteadfastError } = steadfast
const exists = (e) => e instanceof SteadfastError && e.code === 'ERR_STEADFAST_INSTANCE_EXISTS' && /already exists/.test(e.message)

for (const backend of backends('start_exclusive')) {
  describe(`ifExists on ${backend.name}`, { timeout: 120_000 }, () => {
    const runs = new Map()
    const fx = runtimeOn(backend, FAST, (rt) => {
      rt.registerOrchestration('Once', function* (ctx, input) {
        if (!ctx.isReplaying()) runs.set(ctx.instanceId, (runs.get(ctx.instanceId) ?? 0) + 1)
        return input
      })
      rt.registerOrchestrationVersioned('Pinned', '2.0.0', function* (_ctx, input) {
        return { v2: input }
      })
    })

    test("'throw' starts a new id and refuses it once it exists; the default still ignores", async () => {
      const id = uid('excl')
      await fx.client.startOrchestration(id, 'Once', 1, { ifExists: 'throw' })
      await fx.client.waitForOrchestration(id, 20_000)
      await assert.rejects(fx.client.startOrchestration(id, 'Once', 2, { ifExists: 'throw' }), exists)
      await assert.rejects(fx.client.startOrchestrationVersioned(id, 'Pinned', 3, '2.0.0', { ifExists: 'throw' }), exists)
      await assert.rejects(fx.client.startOrchestrationTyped(id, 'Once', 4, { ifExists: 'throw' }), exists)
      await fx.client.startOrchestration(id, 'Once', 5)
      await fx.client.startOrchestration(id, 'Once', 6, { ifExists: 'ignore' })
      const status = await fx.client.waitForOrchestration(id, 20_000)
      assert.equal(status.output, 1)
      assert.equal(runs.get(id), 1)
    })

    test('events to an id nobody started do not make it exist', async () => {
      const id = uid('evented')
      await fx.client.raiseEvent(id, 'Early', 1)
      await fx.client.enqueueEvent(id, 'inbox', 2)
      await fx.client.startOrchestration(id, 'Once', 'ok', { ifExists: 'throw' })
      assert.equal((await fx.client.waitForOrchestration(id, 20_000)).output, 'ok')
    })

    test('a deleted id can be started again', async () => {
      const id = uid('deleted')
      await fx.client.startOrchestration(id, 'Once', 'first', { ifExists: 'throw' })
      await fx.client.waitForOrchestration(id, 20_000)
      await fx.client.deleteInstance(id)
      await fx.client.startOrchestration(id, 'Once', 'second', { ifExists: 'throw' })
      assert.equal((await fx.client.waitForOrchestration(id, 20_000)).output, 'second')
    })

    test('a bad option names the field', async () => {
      await assert.rejects(fx.client.startOrchestration(uid('bad'), 'Once', 1, { ifExists: 'fail' }), (e) => e instanceof TypeError && /options\.ifExists must be/.test(e.message))
      await assert.rejects(fx.client.startOrchestration(uid('bad'), 'Once', 1, { ifexists: 'throw' }), (e) => e instanceof TypeError && /options\.ifexists/.test(e.message))
    })

    test('every start method checks its options by the one rule, with the same error', async () => {
      const starts = {
        startOrchestration: (o) => fx.client.startOrchestration(uid('bad'), 'Once', 1, o),
        startOrchestrationTyped: (o) => fx.client.startOrchestrationTyped(uid('bad'), 'Once', 1, o),
        startOrchestrationVersioned: (o) => fx.client.startOrchestrationVersioned(uid('bad'), 'Pinned', 1, '2.0.0', o),
        startOrchestrationVersionedTyped: (o) => fx.client.startOrchestrationVersionedTyped(uid('bad'), 'Pinned', 1, '2.0.0', o),
      }
      const bad = [
        [{ ifExists: 'fail' }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.ifExists must be one of "ignore", "throw" \(got string "fail"\)$/],
        [{ ifExists: 1 }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.ifExists must be one of/],
        [{ ifExists: null }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.ifExists must be one of/],
        [{ ifexists: 'throw' }, TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.ifexists is not a known option \(did you mean "ifExists"\?\)$/],
        [null, TypeError, 'ERR_INVALID_ARG_TYPE', /^options must be/],
        ['throw', TypeError, 'ERR_INVALID_ARG_TYPE', /^options must be/],
      ]
      for (const [options, cls, code, message] of bad) {
        const errors = []
        for (const [method, start] of Object.entries(starts)) {
          const e = await start(options).then(
            () => assert.fail(`${method}(…, ${JSON.stringify(options)}) resolved`),
            (e) => e,
          )
          assert.ok(e instanceof cls && e.code === code && message.test(e.message), `${method}(…, ${JSON.stringify(options)}): ${e.name} ${e.code}: ${e.message}`)
          errors.push({ method, name: e.name, code: e.code, message: e.message })
        }
        for (const e of errors.slice(1)) assert.deepEqual({ ...e, method: errors[0].method }, errors[0], `${e.method} and ${errors[0].method} disagree`)
      }
      // Every call was refused before the native layer: none of those ids was started.
      for (const id of (await fx.client.listAllInstances()).filter((id) => id.startsWith('bad-'))) assert.fail(`${id} was started`)
    })

    if (backend.name === 'postgres') {
      test('an id exists from its first enqueued start, before it runs', async () => {
        const id = uid('queued')
        await fx.client.startOrchestrationVersioned(id, 'Pinned', 'v', '2.0.0', { ifExists: 'throw' })
        await assert.rejects(fx.client.startOrchestration(id, 'Once', 'again', { ifExists: 'throw' }), exists)
        assert.deepEqual((await fx.client.waitForOrchestration(id, 20_000)).output, { v2: 'v' })
      })

      test('of concurrent exclusive starts of one id, exactly one succeeds', async () => {
        for (let round = 0; round < 6; round++) {
          const id = uid('race')
          // Odd rounds: an event first, so the id's lease row exists before the starts race.
          if (round % 2 === 1) await fx.client.raiseEvent(id, 'Early', round)
          const clients = [fx.client, new steadfast.Client(fx.env.provider)]
          const results = await Promise.allSettled(
            Array.from({ length: 12 }, (_, i) => clients[i % 2].startOrchestration(id, 'Once', i, { ifExists: 'throw' })),
          )
          const won = results.filter((r) => r.status === 'fulfilled')
          assert.equal(won.length, 1, `round ${round}: ${won.length} starts succeeded`)
          for (const r of results.filter((r) => r.status === 'rejected')) assert.ok(exists(r.reason), String(r.reason))
          await fx.client.waitForOrchestration(id, 20_000)
          assert.equal(runs.get(id), 1)
        }
      })
    }
  })
}
