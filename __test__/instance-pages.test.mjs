// Client.listInstances: pages newest first, filters, and a walk through the pages that stays
// exact while instances are created between pages, on SQLite and PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, backends, runtimeOn, uid } from './helpers.mjs'

function register(rt) {
  rt.registerOrchestration('Done', function* (_ctx, x) {
    return x
  })
  rt.registerOrchestration('Broken', function* () {
    throw new Error('broken on purpose')
  })
}

async function runAll(client, name, ids) {
  for (const id of ids) await client.startOrchestration(id, name, 1)
  for (const id of ids) await client.waitForOrchestration(id, 30_000)
}

/**
 * Newest first: creation time never increases. The store orders by microseconds (then id),
 * while createdAt is in milliseconds, so two instances created in one millisecond may come
 * in either id order here (a CI run had done-08 before done-09, both at the same ms).
 */
function isNewestFirst(infos) {
  return infos.every((b, i) => i === 0 || infos[i - 1].createdAt >= b.createdAt)
}

for (const backend of backends('pages')) {
  describe(`listInstances (${backend.name})`, () => {
    const fx = runtimeOn(backend, FAST, register)
    const prefix = uid('page')
    const done = Array.from({ length: 12 }, (_, n) => `${prefix}-done-${String(n).padStart(2, '0')}`)
    const broken = [`${prefix}-broken-a`, `${prefix}-broken-b`]

    test('a walk through the pages sees every instance once, newest first, while others are created', async () => {
      await runAll(fx.client, 'Done', done)
      await runAll(fx.client, 'Broken', broken)
      const seen = []
      const sizes = []
      let cursor
      let late = 0
      do {
        const page = await fx.client.listInstances({ limit: 5, ...(cursor ? { cursor } : {}) })
        sizes.push(page.instances.length)
        seen.push(...page.instances)
        cursor = page.nextCursor
        await runAll(fx.client, 'Done', [`${prefix}-late-${late++}`])
      } while (cursor !== null)
      assert.deepEqual(sizes, [5, 5, 4])
      assert.deepEqual(seen.map((i) => i.instanceId).sort(), [...done, ...broken].sort())
      assert.ok(isNewestFirst(seen), JSON.stringify(seen.map((i) => [i.createdAt, i.instanceId])))
      const first = seen.find((i) => i.instanceId === done[0])
      assert.equal(first.orchestrationName, 'Done')
      assert.equal(first.status, 'Completed')
      assert.equal(first.output, 1)
      const fresh = await fx.client.listInstances({ limit: 1 })
      assert.match(fresh.instances[0].instanceId, new RegExp(`^${prefix}-late-`))
    })

    test('filters apply before paging', async () => {
      const failed = await fx.client.listInstances({ status: 'Failed' })
      assert.deepEqual(failed.instances.map((i) => i.instanceId).sort(), broken)
      assert.equal(failed.nextCursor, null)
      const named = await fx.client.listInstances({ orchestrationName: 'Broken', limit: 1 })
      assert.equal(named.instances.length, 1)
      const rest = await fx.client.listInstances({ orchestrationName: 'Broken', limit: 1, cursor: named.nextCursor })
      assert.deepEqual([named.instances[0].instanceId, rest.instances[0].instanceId].sort(), broken)
      assert.equal(rest.nextCursor, null)
      const none = await fx.client.listInstances({ createdBeforeMs: 0 })
      assert.deepEqual(none, { instances: [], nextCursor: null })
      const orphans = await fx.client.listInstances({ parentInstanceId: done[0] })
      assert.deepEqual(orphans.instances, [])
    })

    test('bad options name the option and the rule', async () => {
      await assert.rejects(fx.client.listInstances({ limit: 0 }), { name: 'RangeError', message: /^options\.limit must be/ })
      await assert.rejects(fx.client.listInstances({ status: 'done' }), { name: 'TypeError', message: /^options\.status must be/ })
      await assert.rejects(fx.client.listInstances({ pageSize: 5 }), { name: 'TypeError', message: /options\.pageSize/ })
      await assert.rejects(fx.client.listInstances({ cursor: 'not-a-cursor' }), { code: 'ERR_STEADFAST_INVALID_ARGUMENT', message: /cursor must be a cursor returned by a previous page/ })
    })
  })
}
