// Events raised to instance ids that were never started (a mistyped id, an event racing its
// start) cannot stop the queue on PostgreSQL: healthy orchestrations started after a flood of
// them all complete, and the misdirected messages end in the dead-letter store as `orphaned`
// with a `messagesOrphaned` event each, never dropped. Before the claim looked only at
// runnable instances, the healthy orchestrations never completed here (every fetch spent its
// tries on the misdirected messages' instances).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, DATABASE_URL, FAST, uid, until, pgSchema } from './helpers.mjs'

const { PostgresProvider, Runtime, Client } = steadfast
const schemas = []

after(async () => {
  for (const s of schemas) await s.drop()
})

test('events to ids never started neither stop healthy work nor vanish', async () => {
  const s = await pgSchema('misdirected')
  schemas.push(s)
  const provider = await PostgresProvider.connectWithSchema(DATABASE_URL, s.schema)
  const client = new Client(provider)
  const ghosts = []
  for (let i = 0; i < 150; i++) {
    const id = uid('ghost')
    ghosts.push(id)
    if (i % 3 === 0) await client.enqueueEvent(id, 'Config', { i })
    else await client.raiseEvent(id, 'Approved', { i })
  }
  const rt = new Runtime(provider, { ...FAST, orphanTimeoutMs: 2000 })
  const orphaned = []
  rt.on('messagesOrphaned', (d) => orphaned.push(d))
  rt.registerActivity('Double', async (_ctx, n) => n * 2)
  rt.registerOrchestration('Quick', function* (ctx, n) {
    return yield ctx.scheduleActivity('Double', n)
  })
  await rt.start()
  try {
    const ids = []
    for (let i = 0; i < 20; i++) {
      const id = uid('healthy')
      ids.push(id)
      await client.startOrchestration(id, 'Quick', i)
    }
    for (const [i, id] of ids.entries()) {
      const status = await client.waitForOrchestration(id, 60_000)
      assert.equal(status.status, 'Completed', status.error)
      assert.equal(status.output, i * 2)
    }

    await until(() => orphaned.length >= ghosts.length, 60_000, `messagesOrphaned for every ghost (${orphaned.length} so far)`)
    const byInstance = new Map(orphaned.map((d) => [d.instanceId, d]))
    for (const id of ghosts) {
      const d = byInstance.get(id)
      assert.ok(d, `no messagesOrphaned for ${id}`)
      assert.equal(d.queue, 'orchestrator')
      assert.equal(d.source, 'provider')
      assert.match(d.messageKind, /^(ExternalRaised|QueueMessage)$/)
      assert.match(d.reason, /^1 message\(s\) waited 2000 ms/)
    }
    const letters = await client.listDeadLetters({ limit: 1000 })
    const orphanLetters = letters.filter((l) => l.reason === 'orphaned')
    assert.deepEqual(new Set(orphanLetters.map((l) => l.instanceId)), new Set(ghosts))
    assert.equal(orphanLetters.length, ghosts.length)
    const depths = await client.getQueueDepths()
    assert.equal(depths.orchestratorQueue, 0)
  } finally {
    await rt.shutdown(2000)
    await provider.close()
  }
})
