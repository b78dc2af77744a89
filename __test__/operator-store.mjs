// The store the operator tools' tests look at (cli.test.mjs, console.test.mjs): a PostgreSQL
// schema of its own, filled by a real runtime with a completed, a failed, a poisoned
// (dead-lettered) and a waiting instance, and a parent with a tree of sub-orchestrations.
import assert from 'node:assert/strict'
import { uid, until, postgresStore } from './helpers.mjs'

/** The orchestrations and activity behind the instances of populate(). */
export function registerOperatorSamples(rt) {
  rt.registerActivity('Hello', async (ctx, name) => `hello ${name}`)
  rt.registerOrchestration('Greet', function* (ctx, name) {
    return yield ctx.scheduleActivity('Hello', name)
  })
  rt.registerOrchestration('Boom', function* () {
    throw new Error('boom on purpose')
  })
  rt.registerOrchestration('CallsMissing', function* (ctx) {
    return yield ctx.scheduleActivity('Missing', 'x')
  })
  rt.registerOrchestration('WaitsForGo', function* (ctx) {
    ctx.setCustomStatus('waiting for Go')
    return yield ctx.waitForEvent('Go')
  })
  rt.registerOrchestration('Child', function* (ctx, { id, depth }) {
    if (depth > 0) yield ctx.scheduleSubOrchestrationWithId('Child', `${id}-grandchild`, { id: `${id}-grandchild`, depth: 0 })
    return depth
  })
  rt.registerOrchestration('Parent', function* (ctx, id) {
    yield ctx.scheduleSubOrchestrationWithId('Child', `${id}-a`, { id: `${id}-a`, depth: 1 })
    yield ctx.scheduleSubOrchestrationWithId('Child', `${id}-b`, { id: `${id}-b`, depth: 0 })
    return 'parent done'
  })
}

/** Fresh ids of the instances populate() starts (`parent` has 3 sub-orchestrations: 8 in all). */
export function operatorSampleIds() {
  return { done: uid('done'), failed: uid('failed'), poisoned: uid('poison'), waiting: uid('wait'), parent: uid('parent') }
}

/**
 * Start the instances of `ids` on a runtime with POISON_FAST options (so the poisoned one is
 * dead-lettered) and wait until every one but the waiting one has ended.
 */
export async function populate(client, ids) {
  await client.startOrchestration(ids.done, 'Greet', 'Ada')
  await client.startOrchestration(ids.failed, 'Boom', null)
  await client.startOrchestration(ids.poisoned, 'CallsMissing', null)
  await client.startOrchestration(ids.parent, 'Parent', ids.parent)
  await client.startOrchestration(ids.waiting, 'WaitsForGo', null)
  assert.equal((await client.waitForOrchestration(ids.done, 30_000)).status, 'Completed')
  assert.equal((await client.waitForOrchestration(ids.failed, 30_000)).status, 'Failed')
  const poisoned = await client.waitForOrchestration(ids.poisoned, 30_000)
  assert.equal(poisoned.errorCategory, 'poison', poisoned.error)
  assert.equal((await client.waitForOrchestration(ids.parent, 30_000)).status, 'Completed')
  await until(async () => (await client.getStatus(ids.waiting)).customStatus === 'waiting for Go', 30_000, 'the waiting instance')
}

/** A runtimeOn() backend on a schema of its own, whose name is `backend.schema` once opened. */
export function operatorBackend(label) {
  const backend = {
    schema: undefined,
    async open() {
      const store = await postgresStore(label)
      backend.schema = store.schema
      return store
    },
  }
  return backend
}
