// Orchestration code that never yields (an endless loop) hangs the process that runs its
// first attempt; the event-loop watch gives that process's work up. The next process to
// claim the instance runs the retried turn's steps under a deadline, so the loop is
// interrupted there and the orchestration fails, instead of hanging every process in turn.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, uid, workerSchema, hungWorker } from './helpers.mjs'

const { Client } = steadfast

test('an endless loop in orchestration code hangs one process, not the next', { timeout: 180_000 }, async () => {
  const s = await workerSchema('spin')
  // No release file: the first process's loop never ends; it is killed at the end.
  const never = `/nonexistent/${uid('never')}`
  const first = hungWorker(s.schema, 'hung', never)
  let next
  try {
    await first.ready
    const client = new Client(s.provider)
    const batch = uid('spin')
    const spinner = `${batch}-spinner`
    await client.startOrchestration(spinner, 'Spinner', null)
    await first.waitFor((l) => l === `spinning ${spinner}`, 30_000, 'the first process to enter the loop')

    next = hungWorker(s.schema, 'healthy', never)
    await next.ready
    const st = await client.waitForOrchestration(spinner, 60_000)
    assert.equal(st.status, 'Failed', JSON.stringify(st))
    assert.match(st.error, /ran for more than 1000 ms without yielding, on a retried claim \(attempt \d+/, st.error)
    assert.ok(next.lines.includes(`spinning ${spinner}`), 'the next process ran the loop too')

    // The next process was interrupted, not hung: it still completes work.
    const work = Array.from({ length: 3 }, (_, i) => `${batch}-work-${i}`)
    for (const [i, id] of work.entries()) await client.startOrchestration(id, 'Work', i)
    for (const [i, id] of work.entries()) {
      const w = await client.waitForOrchestration(id, 30_000)
      assert.equal(w.status, 'Completed', `${id}: ${w.error}`)
      assert.deepEqual(w.output, { n: i, by: 'healthy' })
    }
    next.child.stdin.end('stop\n')
    assert.deepEqual(await next.exited, { code: 0, signal: null })

    const { rows } = await s.db.query(
      `SELECT count(*)::int AS n FROM "${s.schema}".history WHERE instance_id = $1 AND event_type = 'OrchestrationFailed'`,
      [spinner],
    )
    assert.equal(rows[0].n, 1, 'the Spinner failed once')
  } finally {
    for (const w of [first, next]) if (w && w.child.exitCode === null) w.child.kill('SIGKILL')
    await s.close()
  }
})
