// Two Node worker processes on one PostgreSQL schema. One of them hangs: an orchestration
// blocks its event loop (a synchronous wait) while it holds instances and activities, and an
// activity that never settles is running there. The other process completes every other
// instance, including those the hung process held, while it is still hung; the activity that
// never settles ends poisoned after maxAttempts. Once the hung process answers again it
// reports the stall (eventLoopStalled) and commits nothing twice.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { steadfast, uid, workerSchema, hungWorker, sleep, until } from './helpers.mjs'

const { Client } = steadfast

const WORK = 8

/** Instance ids whose orchestrator lease is live, and those with a leased work item. */
async function heldInstances(db, schema) {
  const { rows } = await db.query(
    `SELECT instance_id FROM "${schema}".instance_leases WHERE lock_token IS NOT NULL AND locked_until > clock_timestamp()
     UNION SELECT instance_id FROM "${schema}".worker_queue WHERE lock_token IS NOT NULL AND locked_until > clock_timestamp()`,
  )
  return new Set(rows.map((r) => r.instance_id))
}

test('a process whose event loop hangs gives up its work to the other process', { timeout: 240_000 }, async () => {
  const s = await workerSchema('hung')
  const { db } = s
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-hung-'))
  const release = join(dir, 'release')
  const hung = hungWorker(s.schema, 'hung', release)
  let healthy
  try {
    await hung.ready
    const client = new Client(s.provider)
    const batch = uid('hung')
    const hanger = `${batch}-hanger`
    const blocker = `${batch}-blocker`
    const work = Array.from({ length: WORK }, (_, i) => `${batch}-work-${i}`)

    // The hung process takes the activity that never settles, then the Blocker, and while
    // the Blocker blocks its loop (before eventLoopStallMs, 2 s, has passed) its other
    // dispatcher claims a Work instance it cannot run.
    await client.startOrchestration(hanger, 'Hanger', null)
    await until(async () => (await heldInstances(db, s.schema)).has(hanger), 30_000, 'the Hang activity to be claimed')
    await client.startOrchestration(blocker, 'Blocker', null)
    await hung.waitFor((l) => l === `blocking ${blocker}`, 30_000, 'the Blocker to block')
    for (const [i, id] of work.entries()) await client.startOrchestration(id, 'Work', i)
    const held = await until(async () => {
      const now = await heldInstances(db, s.schema)
      return work.some((id) => now.has(id)) && now
    }, 10_000, 'the hung process to claim a Work instance it cannot run')
    assert.ok(held.has(blocker), `the hung process holds the Blocker: ${[...held]}`)
    const heldWork = work.filter((id) => held.has(id))

    healthy = hungWorker(s.schema, 'healthy', release)
    await healthy.ready
    const began = Date.now()
    for (const [i, id] of [...work.entries(), [null, blocker]]) {
      const st = await client.waitForOrchestration(id, 60_000)
      assert.equal(st.status, 'Completed', `${id}: ${st.error}`)
      assert.deepEqual(st.output, { n: i ?? 'blocker', by: 'healthy' }, id)
    }
    console.log(`the healthy process completed ${WORK + 1} instances (${heldWork.length + 1} held by the hung one) in ${Date.now() - began} ms`)
    assert.ok(!hung.lines.includes('unblocked'), 'all of it while the other process was still hung')

    // The activity that never settles: its lease runs out at maxActivityDurationMs on every
    // attempt, and the attempt after maxAttempts is poisoned.
    const st = await client.waitForOrchestration(hanger, 90_000)
    assert.equal(st.status, 'Failed', `${hanger}: ${JSON.stringify(st)}`)
    assert.match(st.error, /poison|max.?attempts|attempt/i, st.error)
    console.log(`Hanger: ${st.error.slice(0, 200)}`)

    // The hung process answers again: it reports the stall, and its late acks change nothing.
    writeFileSync(release, '')
    const report = JSON.parse(await hung.waitFor((l) => l.startsWith('{'), 30_000, 'the eventLoopStalled report'))
    assert.equal(report.kind, 'eventLoopStalled')
    assert.equal(report.thresholdMs, 2000)
    assert.equal(report.source, 'runtime')
    assert.ok(report.stalledMs >= 2000, `stalledMs ${report.stalledMs}`)
    assert.ok(report.renewalsRefused >= 1, `renewalsRefused ${report.renewalsRefused}`)
    assert.ok(report.fetchesRefused >= 1, `fetchesRefused ${report.fetchesRefused}`)
    assert.match(report.reason, /eventLoopStallMs/)
    await sleep(2000)
    for (const w of [hung, healthy]) w.child.stdin.end('stop\n')
    for (const w of [hung, healthy]) assert.deepEqual(await w.exited, { code: 0, signal: null })

    const { rows } = await db.query(
      `SELECT instance_id, event_type FROM "${s.schema}".history WHERE instance_id LIKE $1`,
      [`${batch}-%`],
    )
    const count = (id, type) => rows.filter((r) => r.instance_id === id && r.event_type === type).length
    for (const id of [...work, blocker]) {
      assert.equal(count(id, 'OrchestrationCompleted'), 1, `${id}: one completion`)
      assert.equal(count(id, 'ActivityCompleted'), 1, `${id}: one activity completion`)
      assert.equal(count(id, 'OrchestrationFailed'), 0, `${id}: no failure`)
    }
    assert.equal(count(hanger, 'OrchestrationFailed'), 1, 'the Hanger failed once')
    const left = await db.query(`SELECT (SELECT count(*) FROM "${s.schema}".worker_queue) + (SELECT count(*) FROM "${s.schema}".orchestrator_queue) AS n`)
    assert.equal(Number(left.rows[0].n), 0, 'both queues drained')
  } finally {
    writeFileSync(release, '')
    for (const w of [hung, healthy]) if (w && w.child.exitCode === null) w.child.kill('SIGKILL')
    await s.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
