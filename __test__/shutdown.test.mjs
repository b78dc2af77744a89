// A runtime's shutdown leaves nothing leased to nobody. Dispatchers long-poll; shutdown
// cancels their fetches, and a claim already running in the database commits anyway. Before
// steadfast-pg gave such claims back, a start enqueued right after shutdown() was now and
// then taken by a claim nobody received (held for the 5 s lock timeout, one attempt counted),
// about one shutdown in four on this machine. Each cycle below enqueues a start right after
// shutdown(), checks that it stays free, and has the next cycle's runtime run it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, backends, sleep } from './helpers.mjs'

const { Runtime, Client } = steadfast
const CYCLES = 10

test('shutdown() gives back claims still in flight: queued starts stay free', { timeout: 120_000 }, async () => {
  const env = await backends('shutdown')[1].open()
  try {
    const client = new Client(env.provider)
    let queued = null
    for (let i = 0; i < CYCLES; i++) {
      const rt = new Runtime(env.provider, FAST)
      rt.registerOrchestration('Done', function* (ctx, n) {
        return n
      })
      await rt.start()
      const id = uid('done')
      await client.startOrchestration(id, 'Done', i)
      assert.equal((await client.waitForOrchestration(id, 30_000)).status, 'Completed')
      if (queued) assert.equal((await client.waitForOrchestration(queued, 30_000)).status, 'Completed')
      await rt.shutdown(2000)
      queued = uid('queued')
      await client.startOrchestration(queued, 'Done', i)
      // A claim nobody received would hold it for the 5 s lock timeout: not counted here.
      await sleep(150)
      assert.equal((await client.getQueueDepths()).orchestratorQueue, 1, `cycle ${i}: the queued start was claimed after shutdown`)
    }
  } finally {
    await env.cleanup()
  }
})
