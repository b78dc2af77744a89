// Every diagnostic event kind, provoked for real (no synthetic emits), with its payload:
//
// * claimExhausted: an admin connection holds every lease row, maxClaimAttempts 1.
// * attemptCeilingEnforced (orchestrator and worker queue): attempt_count raised in the
//   tables above maxAttempts before the runtime claims the messages.
// * historyTooLarge: an orchestration whose history grows past maxHistoryEvents 4.
// * ackRejected (worker): the lease expires in the table while the activity is blocked.
// * ackRejected (orchestrator) + poisonCommittedWithoutLease: a trigger makes one instance's
//   leases born expired, so every turn's ack is refused until the runtime poisons it.
// * poisonLost (SQLite): a trigger refuses the poison completion, so the poison ack fails;
//   once the trigger is dropped the redelivered poison commits (`poisoned`).
// * `diagnostic` carries the same payload as the typed event, every time.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { steadfast, FAST, DATABASE_URL, uid, until, pgSchema } from './helpers.mjs'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { Runtime, Client, PostgresProvider, SqliteProvider } = steadfast

const PAYLOAD_KEYS = ['kind', 'queue', 'instanceId', 'executionId', 'attemptCount', 'maxAttempts', 'messageKind', 'reason', 'at', 'source'].sort()

/** Records a runtime's typed events and its `diagnostic` events. */
function record(rt) {
  const typed = []
  const union = []
  for (const kind of ['poisoned', 'poisonLost', 'poisonCommittedWithoutLease', 'attemptCeilingEnforced', 'historyTooLarge', 'ackRejected', 'claimExhausted', 'messagesOrphaned', 'diagnosticsLagged']) {
    rt.on(kind, (d) => typed.push(d))
  }
  rt.on('diagnostic', (d) => union.push(d))
  return {
    typed,
    union,
    /** Wait for a typed event matching `pred`, then check its `diagnostic` twin. */
    async next(pred, what, timeoutMs = 60_000) {
      const e = await until(() => typed.find(pred), timeoutMs, `${what}; events so far: ${JSON.stringify(typed)}`)
      assert.deepEqual(Object.keys(e).sort(), PAYLOAD_KEYS, `${what}: payload fields`)
      assert.ok(Math.abs(e.at - Date.now()) < 120_000, `${what}: at is a recent epoch-ms time (${e.at})`)
      assert.equal(typeof e.reason, 'string')
      assert.ok(e.reason.length > 0)
      await until(() => union.some((u) => u === e), 5000, `${what}: the diagnostic event`)
      return e
    },
  }
}

async function admin() {
  const c = new pg.Client({ connectionString: DATABASE_URL })
  await c.connect()
  return c
}

async function pgEnv(label) {
  const s = await pgSchema(label)
  const provider = await PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 3 })
  const db = await admin()
  return {
    schema: s.schema,
    provider,
    db,
    t: (table) => `"${s.schema}".${table}`,
    async cleanup() {
      await db.end()
      await provider.close()
      await s.drop()
    },
  }
}

describe('diagnostic events on PostgreSQL', { timeout: 180_000 }, () => {
  test('claimExhausted: every lease row held by another transaction, maxClaimAttempts 1', async () => {
    const env = await pgEnv('ev_claim')
    let rt
    try {
      const client = new Client(env.provider)
      const ids = [uid('held'), uid('held'), uid('held')]
      // Started before the runtime, so their lease rows exist before anyone can claim them.
      for (const id of ids) await client.startOrchestration(id, 'Noop')
      await env.db.query('BEGIN')
      await env.db.query(`SELECT 1 FROM ${env.t('instance_leases')} FOR UPDATE`)

      rt = new Runtime(env.provider, { ...FAST, maxClaimAttempts: 1, maxAttempts: 4, workerConcurrency: 0 })
      rt.registerOrchestration('Noop', function* () {
        return 'ok'
      })
      const events = record(rt)
      await rt.start()
      const e = await events.next((d) => d.kind === 'claimExhausted' && d.queue === 'orchestrator', 'claimExhausted')
      assert.equal(e.instanceId, null)
      assert.equal(e.executionId, null)
      assert.equal(e.attemptCount, null)
      assert.equal(e.maxAttempts, 4)
      assert.equal(e.messageKind, null)
      assert.match(e.reason, /gave up after 1 candidate tries/)
      assert.equal(e.source, 'provider')

      await env.db.query('ROLLBACK')
      for (const id of ids) assert.equal((await client.waitForOrchestration(id, 60_000)).status, 'Completed')
    } finally {
      await rt?.shutdown(2000)
      await env.cleanup()
    }
  })

  test('attemptCeilingEnforced on the orchestrator and the worker queue', async () => {
    const env = await pgEnv('ev_ceiling')
    let rt
    try {
      const client = new Client(env.provider)
      const workId = uid('ceiling-worker')
      const orchId = uid('ceiling-orch')

      // 1. Let a runtime without workers schedule the activity, then stop it.
      const scheduler = new Runtime(env.provider, { ...FAST, maxAttempts: 2, workerConcurrency: 0 })
      scheduler.registerOrchestration('CallsWork', function* (ctx) {
        return yield ctx.scheduleActivity('Work')
      })
      await scheduler.start()
      await client.startOrchestration(workId, 'CallsWork')
      await until(async () => (await env.db.query(`SELECT 1 FROM ${env.t('worker_queue')} WHERE instance_id = $1`, [workId])).rowCount === 1, 30_000, 'the scheduled activity')
      await scheduler.shutdown(2000)

      // 2. Both messages look as if they had been handed out 20 times already.
      await client.startOrchestration(orchId, 'Noop')
      await env.db.query(`UPDATE ${env.t('orchestrator_queue')} SET attempt_count = 20 WHERE instance_id = $1`, [orchId])
      await env.db.query(`UPDATE ${env.t('worker_queue')} SET attempt_count = 20 WHERE instance_id = $1`, [workId])

      rt = new Runtime(env.provider, { ...FAST, maxAttempts: 2 })
      rt.registerActivity('Work', async () => 'worked')
      rt.registerOrchestration('Noop', function* () {
        return 'ok'
      })
      rt.registerOrchestration('CallsWork', function* (ctx) {
        return yield ctx.scheduleActivity('Work')
      })
      const events = record(rt)
      await rt.start()

      const o = await events.next((d) => d.kind === 'attemptCeilingEnforced' && d.instanceId === orchId, 'orchestrator ceiling')
      assert.equal(o.queue, 'orchestrator')
      assert.equal(o.executionId, 1)
      assert.equal(o.attemptCount, 3, 'handed out maxAttempts + 1 times')
      assert.equal(o.maxAttempts, 2)
      assert.match(o.messageKind, /StartOrchestration/)
      assert.match(o.reason, /failed the execution as poison/)
      assert.equal(o.source, 'provider')

      const w = await events.next((d) => d.kind === 'attemptCeilingEnforced' && d.instanceId === workId, 'worker ceiling')
      assert.equal(w.queue, 'worker')
      assert.equal(w.executionId, 1)
      assert.equal(w.attemptCount, 3)
      assert.equal(w.maxAttempts, 2)
      assert.equal(w.messageKind, 'ActivityExecute')
      assert.match(w.reason, /activity 'Work' handed out 3 times/)

      for (const id of [orchId, workId]) {
        const s = await client.waitForOrchestration(id, 60_000)
        assert.equal(s.status, 'Failed', id)
        assert.equal(s.errorCategory, 'poison', id)
      }
      const letters = await client.listDeadLetters({})
      assert.ok(letters.some((l) => l.instanceId === orchId && l.queue === 'orchestrator' && l.reason === 'attempt_ceiling'))
      assert.ok(letters.some((l) => l.instanceId === workId && l.queue === 'worker' && l.reason === 'attempt_ceiling'))
    } finally {
      await rt?.shutdown(2000)
      await env.cleanup()
    }
  })

  test('historyTooLarge: a history past maxHistoryEvents fails its execution once, with the reason', async () => {
    const env = await pgEnv('ev_history')
    let rt
    try {
      const client = new Client(env.provider)
      const id = uid('long-history')
      rt = new Runtime(env.provider, { ...FAST, maxAttempts: 3, maxHistoryEvents: 4 })
      rt.registerActivity('Step', async (_ctx, n) => n)
      rt.registerOrchestration('Steps', function* (ctx) {
        for (let n = 0; n < 5; n++) yield ctx.scheduleActivity('Step', n)
        return 'done'
      })
      const events = record(rt)
      await rt.start()
      await client.startOrchestration(id, 'Steps')

      const e = await events.next((d) => d.kind === 'historyTooLarge' && d.instanceId === id, 'historyTooLarge')
      assert.equal(e.queue, 'orchestrator')
      assert.equal(e.executionId, 1)
      assert.equal(e.attemptCount, null)
      assert.equal(e.maxAttempts, 3)
      assert.match(e.messageKind, /ActivityCompleted/)
      assert.match(e.reason, /claim\.max_history_events.*the claim failed the execution and moved 1 message/)
      assert.equal(e.source, 'provider')

      const s = await client.waitForOrchestration(id, 60_000)
      assert.equal(s.status, 'Failed')
      assert.equal(s.errorCategory, 'infrastructure')
      assert.match(s.error, /infrastructure:load_history: the history of execution 1 has more than 4 events \(claim\.max_history_events\)/)
      const letters = await client.listDeadLetters({})
      assert.deepEqual(letters.filter((l) => l.instanceId === id).map((l) => l.reason), ['history_too_large'])
      assert.equal(events.typed.filter((d) => d.kind === 'historyTooLarge').length, 1, 'once')
    } finally {
      await rt?.shutdown(2000)
      await env.cleanup()
    }
  })

  test('ackRejected on the worker queue: the lease expires under a blocked activity', async () => {
    const env = await pgEnv('ev_wack')
    let rt
    try {
      let release
      const gate = new Promise((r) => (release = r))
      let calls = 0
      rt = new Runtime(env.provider, { ...FAST, maxAttempts: 5, workerConcurrency: 1, redeliveryBackoffBaseMs: 10, redeliveryBackoffCapMs: 100 })
      rt.registerActivity('Blocked', async () => {
        calls++
        if (calls === 1) {
          await gate
          return 'first'
        }
        return 'second'
      })
      rt.registerOrchestration('CallsBlocked', function* (ctx) {
        return yield ctx.scheduleActivity('Blocked')
      })
      const events = record(rt)
      await rt.start()
      const client = new Client(env.provider)
      const id = uid('wack')
      await client.startOrchestration(id, 'CallsBlocked')
      await until(() => calls === 1, 30_000, 'the activity to start')
      const expired = await env.db.query(`UPDATE ${env.t('worker_queue')} SET locked_until = clock_timestamp() - interval '1 second' WHERE instance_id = $1 AND lock_token IS NOT NULL`, [id])
      assert.equal(expired.rowCount, 1)
      release()

      const e = await events.next((d) => d.kind === 'ackRejected' && d.queue === 'worker', 'worker ackRejected')
      assert.equal(e.instanceId, id)
      assert.equal(e.executionId, 1)
      assert.equal(e.attemptCount, 1)
      assert.equal(e.maxAttempts, 5)
      assert.equal(e.messageKind, 'ActivityCompleted')
      assert.match(e.reason, /lock token expired/)
      assert.equal(e.source, 'provider')
      // The refused result is not lost work: the item is redelivered and completes.
      const s = await client.waitForOrchestration(id, 60_000)
      assert.equal(s.status, 'Completed')
      assert.equal(s.output, 'second')
    } finally {
      await rt?.shutdown(2000)
      await env.cleanup()
    }
  })

  test('ackRejected on the orchestrator queue, then poisonCommittedWithoutLease (leases born expired)', async () => {
    const env = await pgEnv('ev_oack')
    let rt
    try {
      const id = uid('born-expired')
      await env.db.query(`CREATE FUNCTION "${env.schema}".born_expired() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.instance_id = '${id}' AND NEW.lock_token IS NOT NULL THEN
            NEW.locked_until := NEW.locked_at;
          END IF;
          RETURN NEW;
        END $$`)
      await env.db.query(`CREATE TRIGGER born_expired BEFORE UPDATE ON ${env.t('instance_leases')} FOR EACH ROW EXECUTE FUNCTION "${env.schema}".born_expired()`)

      rt = new Runtime(env.provider, { ...FAST, maxAttempts: 2, orchestrationConcurrency: 1, redeliveryBackoffBaseMs: 10, redeliveryBackoffCapMs: 100 })
      rt.registerOrchestration('Noop', function* () {
        return 'ok'
      })
      const events = record(rt)
      await rt.start()
      const client = new Client(env.provider)
      await client.startOrchestration(id, 'Noop')

      const a = await events.next((d) => d.kind === 'ackRejected' && d.queue === 'orchestrator' && d.instanceId === id, 'orchestrator ackRejected')
      assert.equal(a.executionId, 1)
      assert.equal(a.attemptCount, 1, 'the first claim')
      assert.equal(a.maxAttempts, 2)
      assert.match(a.reason, /lock token expired; the turn was not committed/)
      assert.equal(a.source, 'provider')

      const p = await events.next((d) => d.kind === 'poisonCommittedWithoutLease' && d.instanceId === id, 'poisonCommittedWithoutLease')
      assert.equal(p.queue, 'orchestrator')
      assert.equal(p.executionId, 1)
      assert.equal(p.attemptCount, 3)
      assert.equal(p.maxAttempts, 2)
      assert.match(p.messageKind, /StartOrchestration/)
      assert.match(p.reason, /lease expired; committed keyed on \(instance, generation, execution 1, attempt 3\)/)

      const s = await client.waitForOrchestration(id, 30_000)
      assert.equal(s.status, 'Failed')
      assert.equal(s.errorCategory, 'poison')
      assert.ok(!events.typed.some((d) => d.kind === 'poisonLost'), 'the disposition was not lost')
    } finally {
      await rt?.shutdown(2000)
      await env.cleanup()
    }
  })
})

describe('diagnostic events on SQLite', { timeout: 120_000 }, () => {
  let dir
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'steadfast-events-'))
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  /** Run SQL on the database file with the sqlite3 shell (waits out the runtime's locks). */
  const sqlite = (file, sql) => execFileSync('sqlite3', ['-cmd', '.timeout 20000', file, sql], { encoding: 'utf8' })

  test('poisonLost when the poison ack fails for real, then poisoned once it can commit', async () => {
    const file = path.join(dir, 'poison-lost.db')
    const provider = await SqliteProvider.open(file)
    const id = uid('lost')
    sqlite(file, `CREATE TRIGGER refuse_poison BEFORE INSERT ON orchestrator_queue
      WHEN NEW.instance_id = '${id}' AND NEW.work_item LIKE '%ActivityFailed%'
      BEGIN SELECT RAISE(ABORT, 'test: poison completion refused'); END;`)
    const rt = new Runtime(provider, { ...FAST, maxAttempts: 2, workerLockTimeoutMs: 1000, unregisteredBackoffBaseMs: 10, unregisteredBackoffMaxMs: 50 })
    rt.registerOrchestration('CallsMissing', function* (ctx) {
      return yield ctx.scheduleActivity('NobodyRunsThis', 'payload')
    })
    const events = record(rt)
    try {
      await rt.start()
      const client = new Client(provider)
      await client.startOrchestration(id, 'CallsMissing')

      const lost = await events.next((d) => d.kind === 'poisonLost' && d.instanceId === id, 'poisonLost')
      assert.equal(lost.queue, 'worker')
      assert.equal(lost.executionId, 1)
      assert.equal(lost.attemptCount, 3)
      assert.equal(lost.maxAttempts, 2)
      assert.equal(lost.messageKind, 'activity:NobodyRunsThis')
      assert.match(lost.reason, /poison disposition not committed: .*poison completion refused/)
      assert.equal(lost.source, 'runtime')
      assert.equal((await client.getStatus(id)).status, 'Running', 'the lost disposition left the instance running')

      sqlite(file, 'DROP TRIGGER refuse_poison;')
      const ok = await events.next((d) => d.kind === 'poisoned' && d.instanceId === id, 'poisoned after the trigger is gone')
      assert.equal(ok.queue, 'worker')
      assert.ok(ok.attemptCount > 3, `redelivered after the lost ack (attempt ${ok.attemptCount})`)
      const s = await client.waitForOrchestration(id, 30_000)
      assert.equal(s.status, 'Failed')
      assert.equal(s.errorCategory, 'poison')
    } finally {
      await rt.shutdown(2000)
    }
  })
})
