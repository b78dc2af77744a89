// Several Node worker processes (child_process) on one PostgreSQL schema finish a batch of
// orchestrations. Checked from the stored history, not from the processes' own claims: each
// instance completed exactly once, and every scheduled activity has exactly one completion.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { steadfast, DATABASE_URL, uid, pgSchema, spawnWorker } from './helpers.mjs'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { PostgresProvider, Client } = steadfast

const PROCESSES = 4
const INSTANCES = 40

/** One worker process; `ready` resolves once it printed "ready". */
const startWorker = (schema) => spawnWorker('mp-worker.mjs', [DATABASE_URL, schema])

test(`${PROCESSES} worker processes on one schema finish ${INSTANCES} orchestrations exactly once`, { timeout: 240_000 }, async () => {
  const s = await pgSchema('multiproc')
  // Creates the schema (migrations) before the workers connect.
  const provider = await PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 2 })
  const workers = []
  try {
    for (let i = 0; i < PROCESSES; i++) workers.push(startWorker(s.schema))
    await Promise.all(workers.map((w) => w.ready))

    const client = new Client(provider)
    const batch = uid('mp')
    const ids = Array.from({ length: INSTANCES }, (_, i) => `${batch}-${i}`)
    for (const [i, id] of ids.entries()) await client.startOrchestration(id, 'Batch', i)
    for (const [i, id] of ids.entries()) {
      const st = await client.waitForOrchestration(id, 180_000)
      assert.equal(st.status, 'Completed', `${id}: ${st.error}`)
      assert.equal(st.output.n, i)
      assert.equal(st.output.charged.charged, i * 10)
    }

    for (const w of workers) w.child.stdin.end('stop\n')
    const exits = await Promise.all(workers.map((w) => w.exited))
    for (const e of exits) assert.deepEqual(e, { code: 0, signal: null })
    const reports = workers.map((w) => JSON.parse(w.lines.at(-1)))
    const executed = reports.reduce((n, r) => n + r.activities, 0)
    // At-least-once execution: a redelivered activity may run twice, never zero times.
    assert.ok(executed >= INSTANCES * 2, `activities executed: ${executed}`)
    console.log(`activities per process: ${reports.map((r) => r.activities).join(', ')}`)

    const db = new pg.Client({ connectionString: DATABASE_URL })
    await db.connect()
    try {
      const { rows } = await db.query(
        `SELECT instance_id, event_type, event_id, (event_data::jsonb ->> 'source_event_id')::bigint AS source
           FROM "${s.schema}".history WHERE instance_id LIKE $1 ORDER BY instance_id, execution_id, event_id`,
        [`${batch}-%`],
      )
      const byInstance = new Map(ids.map((id) => [id, []]))
      for (const r of rows) byInstance.get(r.instance_id).push(r)
      for (const [id, events] of byInstance) {
        const of = (type) => events.filter((e) => e.event_type === type)
        assert.equal(of('OrchestrationStarted').length, 1, `${id}: one start`)
        assert.equal(of('OrchestrationCompleted').length, 1, `${id}: one completion`)
        assert.equal(of('OrchestrationFailed').length, 0, `${id}: no failure`)
        const scheduled = of('ActivityScheduled').map((e) => Number(e.event_id))
        const completed = of('ActivityCompleted').map((e) => Number(e.source))
        assert.equal(scheduled.length, 2, `${id}: two activities scheduled`)
        assert.deepEqual([...completed].sort(), [...scheduled].sort(), `${id}: one completion per scheduled activity`)
      }
      const left = await db.query(`SELECT (SELECT count(*) FROM "${s.schema}".worker_queue) + (SELECT count(*) FROM "${s.schema}".orchestrator_queue) AS n`)
      assert.equal(Number(left.rows[0].n), 0, 'both queues drained')
    } finally {
      await db.end()
    }
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL')
    await provider.close()
    await s.drop()
  }
})
