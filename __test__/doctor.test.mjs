// `steadfast doctor` (bin/steadfast.js + lib/doctor/) against a real PostgreSQL: a steadfast
// schema built from the provider's own migrations (and one made by the provider itself),
// healthy, with dead letters, and with the incident's signature; a duroxide-pg-shaped schema
// (tables as its migrations leave them); read-only-ness under foreign row and table locks;
// usage and connection errors; and the password never appearing in any output.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import {
  DATABASE_URL,
  SCHEMA_VERSION,
  pg,
  connect,
  createSteadfastSchema,
  doctor,
  dropCreatedSchemas,
  schemaName,
} from './doctor-fixtures.mjs'

const require = createRequire(import.meta.url)

/**
 * The duroxide-pg 0.1.38 tables doctor reads, with the columns its migrations leave them with
 * (0001 initial, 0003 attempt_count, 0005 worker visible_at, 0009 activity identity, 0012 NOT
 * NULL timestamps, 0014 sessions, 0016 tags): lock expiry is BIGINT epoch milliseconds.
 */
async function createDuroxideSchema(db, schema) {
  const q = `"${schema}"`
  await db.query(`
    CREATE SCHEMA ${q};
    CREATE TABLE ${q}._duroxide_migrations (version bigint PRIMARY KEY, name text NOT NULL,
        applied_at timestamptz DEFAULT CURRENT_TIMESTAMP);
    INSERT INTO ${q}._duroxide_migrations (version, name) VALUES (1, 'initial_schema'), (26, 'serialize_orchestration_lock_mutations');
    CREATE TABLE ${q}.instances (instance_id text PRIMARY KEY, orchestration_name text NOT NULL,
        orchestration_version text, current_execution_id bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
    CREATE TABLE ${q}.orchestrator_queue (id bigserial PRIMARY KEY, instance_id text NOT NULL,
        work_item text NOT NULL, visible_at timestamptz NOT NULL, lock_token text, locked_until bigint,
        created_at timestamptz NOT NULL, attempt_count integer NOT NULL DEFAULT 0);
    CREATE TABLE ${q}.worker_queue (id bigserial PRIMARY KEY, work_item text NOT NULL,
        visible_at timestamptz NOT NULL, lock_token text, locked_until bigint, created_at timestamptz NOT NULL,
        attempt_count integer NOT NULL DEFAULT 0, instance_id text, execution_id bigint, activity_id bigint,
        session_id text, tag text);
    CREATE TABLE ${q}.instance_locks (instance_id text PRIMARY KEY, lock_token text NOT NULL,
        locked_until bigint NOT NULL, locked_at bigint NOT NULL);
  `)
}

/** Run doctor with --json on `schema`; resolves to { code, report, byName, stderr }. */
async function doctorJson(schema, extra = []) {
  const sample = extra.includes('--sample-seconds') ? [] : ['--sample-seconds', '1']
  const r = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--json', ...sample, ...extra])
  let report
  try {
    report = JSON.parse(r.stdout)
  } catch {
    assert.fail(`stdout is not JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`)
  }
  return { ...r, report, byName: Object.fromEntries((report.checks || []).map((c) => [c.name, c])) }
}

function assertReportShape(report) {
  assert.equal(typeof report.schema, 'string')
  assert.ok(report.kind === 'steadfast' || report.kind === 'duroxide-pg', report.kind)
  assert.equal(typeof report.healthy, 'boolean')
  assert.ok(Array.isArray(report.checks) && report.checks.length > 0)
  for (const c of report.checks) {
    assert.deepEqual(Object.keys(c).sort(), ['detail', 'name', 'status', 'value'])
    assert.ok(['ok', 'warn', 'fail'].includes(c.status), `${c.name}: ${c.status}`)
    assert.equal(typeof c.detail, 'string')
  }
  assert.equal(report.healthy, !report.checks.some((c) => c.status === 'fail'))
}

/** Row count and content digest of every table of the schema. */
async function fingerprint(db, schema) {
  const tables = (
    await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, [schema])
  ).rows.map((r) => r.tablename)
  const out = {}
  for (const t of tables) {
    const r = await db.query(
      `SELECT count(*)::int AS n, md5(COALESCE(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${schema}"."${t}" AS x`,
    )
    out[t] = `${r.rows[0].n}:${r.rows[0].h}`
  }
  return out
}

let db

before(async () => {
  db = await connect()
})

after(async () => {
  if (db) {
    await dropCreatedSchemas(db)
    await db.end()
  }
})

describe('steadfast schema', () => {
  let schema
  let q

  before(async () => {
    schema = schemaName('sf')
    q = `"${schema}"`
    await createSteadfastSchema(db, schema)
  })

  test('(a) a healthy queue: exit 0, every check reported, counts right', async () => {
    await db.query(`
      INSERT INTO ${q}.instance_leases (instance_id) VALUES ('ready-1'), ('ready-2'), ('timer-1');
      INSERT INTO ${q}.orchestrator_queue (instance_id, work_item) VALUES ('ready-1', '{}'), ('ready-2', '{}');
      INSERT INTO ${q}.orchestrator_queue (instance_id, work_item, visible_at)
        VALUES ('timer-1', '{}', clock_timestamp() + interval '1 hour');
      -- an instance under a live lease, on its first attempt
      INSERT INTO ${q}.instance_leases (instance_id, lock_token, locked_at, locked_until, attempt_count)
        VALUES ('busy-1', 'busy-1:t', clock_timestamp(), clock_timestamp() + interval '30 seconds', 1);
      INSERT INTO ${q}.orchestrator_queue (instance_id, work_item, lock_token, attempt_count)
        VALUES ('busy-1', '{}', 'busy-1:t', 1);
      INSERT INTO ${q}.worker_queue (work_item, instance_id, execution_id, activity_id) VALUES ('{}', 'ready-1', 1, 1);
      INSERT INTO ${q}.worker_queue (work_item, instance_id, execution_id, activity_id, lock_token, locked_until, attempt_count)
        VALUES ('{}', 'ready-2', 1, 2, 'w:t', clock_timestamp() + interval '30 seconds', 1);
    `)
    const { code, report, byName, stderr } = await doctorJson(schema)
    assert.equal(code, 0, `${stderr}\n${JSON.stringify(report, null, 2)}`)
    assertReportShape(report)
    assert.equal(report.kind, 'steadfast')
    assert.equal(report.schema, schema)
    assert.equal(report.schemaVersion, SCHEMA_VERSION)
    assert.equal(report.healthy, true)
    assert.deepEqual(
      report.checks.map((c) => c.name),
      [
        'orchestrator_queue',
        'worker_queue',
        'oldest_ready_message',
        'attempts_over_max',
        'expired_leases',
        'leases_born_expired',
        'longest_live_lease',
        'dead_letters',
        'lock_waiters',
        'fetch_latency',
      ],
    )
    assert.deepEqual(
      { ...byName.orchestrator_queue.value },
      { total: 4, ready: 2, delayed: 1, leased: 1, instances: 4, maxAttemptCount: 1 },
    )
    assert.deepEqual(
      { ...byName.worker_queue.value },
      { total: 2, ready: 1, delayed: 0, leased: 1, instances: 2, maxAttemptCount: 1 },
    )
    assert.equal(byName.attempts_over_max.status, 'ok')
    assert.equal(byName.expired_leases.status, 'ok')
    assert.equal(byName.leases_born_expired.status, 'ok')
    assert.equal(byName.longest_live_lease.value.live, 1)
    assert.equal(byName.longest_live_lease.value.longest.instanceId, 'busy-1')
    assert.equal(byName.dead_letters.status, 'ok')
    assert.equal(byName.dead_letters.value.total, 0)
    // Nothing consumes this queue: the sampler says so, as a warning only.
    assert.equal(byName.fetch_latency.status, 'warn')
    assert.match(byName.fetch_latency.detail, /not consumed/)
    assert.match(byName.fetch_latency.value.method, /ready messages/)

    const text = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '0'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /^VERDICT: HEALTHY$/m)
    assert.match(text.stdout, /orchestrator_queue\s+4 messages for 4 instances: 2 ready, 1 delayed, 1 leased/)
    assert.match(text.stdout, /fetch_latency\s+not sampled/)
  })

  test('(c) dead letters are reported by count, reason and newest, as a warning', async () => {
    await db.query(`
      INSERT INTO ${q}.dead_letters (queue, instance_id, execution_id, activity_id, attempt_count, max_attempts, reason, error, work_item, enqueued_at)
      VALUES ('orchestrator', 'dl-a', 1, NULL, 11, 10, 'poison', 'boom', '{}', clock_timestamp()),
             ('worker', 'dl-b', 1, 3, 11, 10, 'attempt_ceiling', NULL, '{}', clock_timestamp()),
             ('worker', 'dl-c', 1, 4, 11, 10, 'attempt_ceiling', NULL, '{}', clock_timestamp());
    `)
    const { code, report, byName } = await doctorJson(schema)
    assert.equal(code, 0, JSON.stringify(report, null, 2))
    const dl = byName.dead_letters
    assert.equal(dl.status, 'warn')
    assert.equal(dl.value.total, 3)
    assert.deepEqual(dl.value.byReason, [
      { reason: 'attempt_ceiling', count: 2 },
      { reason: 'poison', count: 1 },
    ])
    assert.deepEqual(dl.value.byQueue, [
      { queue: 'orchestrator', count: 1 },
      { queue: 'worker', count: 2 },
    ])
    assert.deepEqual(
      dl.value.newest.map((d) => d.instanceId),
      ['dl-c', 'dl-b', 'dl-a'],
    )
    assert.match(dl.detail, /3 dead letters/)
    assert.ok(report.warnings.some((w) => w.startsWith('dead_letters:')))

    const text = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '0'])
    assert.equal(text.code, 0)
    assert.match(text.stdout, /WARN\s+dead_letters\s+3 dead letters/)
    assert.match(text.stdout, /#\d+ orchestrator dl-a poison/)
    assert.match(text.stdout, /^VERDICT: HEALTHY with 1 warning \(dead_letters\)$/m)
  })

  test('an attempt of max_attempts + 1 under a live lease is the poison turn in flight: a warning', async () => {
    const s = schemaName('settled')
    await createSteadfastSchema(db, s)
    await db.query(`
      INSERT INTO "${s}".instance_leases (instance_id, lock_token, locked_at, locked_until, attempt_count)
        VALUES ('p', 'p:t', clock_timestamp(), clock_timestamp() + interval '30 seconds', 11);
      INSERT INTO "${s}".orchestrator_queue (instance_id, work_item, lock_token, attempt_count) VALUES ('p', '{}', 'p:t', 11);
    `)
    const { code, byName } = await doctorJson(s, ['--sample-seconds', '0'])
    assert.equal(code, 0)
    assert.equal(byName.attempts_over_max.status, 'warn')
    assert.equal(byName.attempts_over_max.value.unsettled, 0)
    const strict = await doctorJson(s, ['--sample-seconds', '0', '--max-attempts', '5'])
    assert.equal(strict.code, 1)
    assert.equal(strict.byName.attempts_over_max.status, 'fail')
  })

  test('(b) the incident signature: attempt_count 78987 and a lease expired days ago → exit 1 naming the check', async () => {
    await db.query(`
      INSERT INTO ${q}.instance_leases (instance_id, lock_token, locked_at, locked_until, attempt_count)
        VALUES ('incident-1', 'incident-1:stale', clock_timestamp() - interval '5 days 30 seconds',
                clock_timestamp() - interval '5 days', 78987);
      INSERT INTO ${q}.orchestrator_queue (instance_id, work_item, visible_at, lock_token, attempt_count, created_at)
        VALUES ('incident-1', '{"StartOrchestration":{}}', clock_timestamp() - interval '5 days 1 hour',
                'incident-1:stale', 78987, clock_timestamp() - interval '5 days 1 hour');
      -- a lease stamped already expired (the stale-timestamp defect)
      INSERT INTO ${q}.instance_leases (instance_id, lock_token, locked_at, locked_until, attempt_count)
        VALUES ('born-1', 'born-1:t', clock_timestamp(), clock_timestamp() - interval '1 second', 1);
    `)
    const text = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '1'])
    assert.equal(text.code, 1, text.stdout + text.stderr)
    const verdict = text.stdout.split('\n').find((l) => l.startsWith('VERDICT:'))
    assert.match(verdict, /^VERDICT: UNHEALTHY \(\d+ failing: .*attempts_over_max/)
    assert.match(verdict, /expired_leases/)
    const flat = text.stdout.replace(/\s+/g, ' ') // the text report wraps long details
    assert.match(flat, /FAIL attempts_over_max 1 message of 1 instance past max_attempts 10 \(max attempt_count 78987\)/)
    assert.match(flat, /incident-1 attempt_count 78987 1 message lease expired 5d \d+h ago, token still set/)

    const { code, report, byName } = await doctorJson(schema)
    assert.equal(code, 1)
    assertReportShape(report)
    assert.equal(report.healthy, false)
    assert.equal(report.verdict, 'UNHEALTHY')
    const a = byName.attempts_over_max
    assert.equal(a.status, 'fail')
    assert.equal(a.value.maxAttempts, 10)
    assert.equal(a.value.maxAttemptCount, 78987)
    assert.equal(a.value.top[0].instanceId, 'incident-1')
    assert.equal(a.value.top[0].queue, 'orchestrator')
    assert.equal(a.value.top[0].leased, false)
    assert.ok(a.value.top[0].leaseExpiredSeconds > 4 * 86400, JSON.stringify(a.value.top[0]))
    const e = byName.expired_leases
    assert.equal(e.status, 'fail')
    assert.ok(e.value.instances.expired >= 1)
    assert.equal(e.value.instances.stuck, 1)
    assert.equal(e.value.instances.top[0].instanceId, 'incident-1')
    assert.equal(byName.leases_born_expired.status, 'fail')
    assert.deepEqual(
      byName.leases_born_expired.value.top.map((t) => t.instanceId),
      ['born-1'],
    )
    assert.equal(byName.oldest_ready_message.status, 'fail')
    assert.ok(report.reasons.some((r) => r.startsWith('attempts_over_max:')))
    // The flag moves the limit: with a limit above the count the signature is gone.
    const lenient = await doctorJson(schema, ['--max-attempts', '100000', '--sample-seconds', '0'])
    assert.equal(lenient.byName.attempts_over_max.status, 'ok')
    assert.equal(lenient.code, 1) // the expired lease is still there
  })

  test('read-only: runs beside FOR UPDATE row locks without blocking, changes nothing, takes no row locks', async () => {
    const holder = await connect()
    const watcher = await connect()
    try {
      await holder.query('BEGIN')
      await holder.query(`SELECT * FROM ${q}.orchestrator_queue FOR UPDATE`)
      await holder.query(`SELECT * FROM ${q}.instance_leases FOR UPDATE`)
      await holder.query(`SELECT * FROM ${q}.worker_queue FOR UPDATE`)
      const before = await fingerprint(db, schema)
      const seen = { sessions: 0, xids: [], modes: new Set(), readOnly: new Set() }
      let running = true
      const watch = (async () => {
        while (running) {
          const r = await watcher.query(
            `SELECT a.backend_xid::text AS xid, l.locktype, l.mode
             FROM pg_stat_activity AS a LEFT JOIN pg_locks AS l ON l.pid = a.pid
             WHERE a.application_name = 'steadfast-doctor' AND a.datname = current_database()`,
          )
          if (r.rowCount) seen.sessions++
          for (const row of r.rows) {
            if (row.xid) seen.xids.push(row.xid)
            if (row.locktype) seen.modes.add(`${row.locktype}:${row.mode}`)
          }
          await new Promise((res) => setTimeout(res, 50))
        }
      })()
      const r = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '2', '--json'], {
        timeoutMs: 30_000,
      })
      running = false
      await watch
      assert.equal(r.code, 1, r.stderr) // the incident rows are still there; not 2: nothing timed out
      assert.ok(r.ms < 15_000, `doctor took ${r.ms} ms beside row locks`)
      const report = JSON.parse(r.stdout)
      assert.equal(report.checks.find((c) => c.name === 'orchestrator_queue').value.total >= 5, true)
      // doctor's session never got a transaction id (it wrote nothing) and locked no rows:
      // only AccessShareLock on relations, plus its own virtual transaction id.
      assert.ok(seen.sessions > 0, 'the watcher never saw the doctor session')
      assert.deepEqual(seen.xids, [])
      for (const m of seen.modes) {
        assert.ok(['relation:AccessShareLock', 'virtualxid:ExclusiveLock'].includes(m), `doctor held ${m}`)
      }
      // The holder's locks are intact and the data is unchanged.
      assert.equal((await holder.query(`SELECT count(*)::int AS n FROM ${q}.orchestrator_queue`)).rows[0].n >= 5, true)
      await holder.query('ROLLBACK')
      assert.deepEqual(await fingerprint(db, schema), before)
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      await holder.end()
      await watcher.end()
    }
  })

  test('while doctor samples it holds no lock, so DDL never queues behind it (nor claims behind the DDL)', async () => {
    const ddl = await connect()
    try {
      const run = doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '4', '--json'], {
        timeoutMs: 30_000,
      })
      // A migration's DDL, against each table doctor reads, while it samples: ACCESS EXCLUSIVE,
      // which one transaction over the window would make wait until doctor ends.
      const waits = []
      for (const table of ['orchestrator_queue', 'instance_leases', 'worker_queue', 'dead_letters', 'orchestrator_queue']) {
        await new Promise((res) => setTimeout(res, 500))
        const started = Date.now()
        await ddl.query('BEGIN')
        await ddl.query(`ALTER TABLE ${q}.${table} ADD COLUMN doctor_probe integer`)
        await ddl.query('ROLLBACK')
        waits.push(Date.now() - started)
      }
      const r = await run
      assert.ok(r.ms >= 4000, `doctor sampled for ${r.ms} ms`)
      assert.ok(Math.max(...waits) < 1000, `ALTER TABLE waited ${waits.join(', ')} ms while doctor sampled`)
      assert.notEqual(r.code, 2, r.stderr)
    } finally {
      await ddl.query('ROLLBACK').catch(() => {})
      await ddl.end()
    }
  })

  test('a table locked while doctor samples makes it give up after its lock timeout, not wait for the lock', async () => {
    const holder = await connect()
    try {
      const run = doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '20'], {
        timeoutMs: 30_000,
      })
      await new Promise((res) => setTimeout(res, 1500))
      await holder.query('BEGIN')
      await holder.query(`LOCK TABLE ${q}.orchestrator_queue IN ACCESS EXCLUSIVE MODE`)
      const locked = Date.now()
      const r = await run
      const waited = Date.now() - locked
      await holder.query('ROLLBACK')
      assert.equal(r.code, 2, r.stdout + r.stderr)
      assert.match(r.stderr, /locked exclusively .*doctor gave up after 2s rather than wait/)
      assert.ok(waited < 6000, `doctor waited ${waited} ms on the lock`)
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      await holder.end()
    }
  })

  test('an exclusive table lock makes doctor give up quickly with exit 2 instead of waiting', async () => {
    const holder = await connect()
    try {
      await holder.query('BEGIN')
      await holder.query(`LOCK TABLE ${q}.orchestrator_queue IN ACCESS EXCLUSIVE MODE`)
      const r = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '0'], {
        timeoutMs: 30_000,
      })
      assert.equal(r.code, 2, r.stdout + r.stderr)
      assert.ok(r.ms < 15_000, `took ${r.ms} ms`)
      assert.match(r.stderr, /locked exclusively/)
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      await holder.end()
    }
  })
})

describe('a schema the provider made and ran', () => {
  test('healthy, at the version of the last migration, after real orchestrations', async () => {
    const steadfast = require('../lib/index.js')
    const schema = schemaName('real')
    const provider = await steadfast.PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema, maxConnections: 3 })
    const runtime = new steadfast.Runtime(provider, { dispatcherPollIntervalMs: 10, logLevel: 'error' })
    runtime.registerActivity('Twice', async (_ctx, x) => x * 2)
    runtime.registerOrchestration('Calc', function* (ctx, x) {
      return yield ctx.scheduleActivity('Twice', x)
    })
    await runtime.start()
    try {
      const client = new steadfast.Client(provider)
      await client.startOrchestration('real-1', 'Calc', 21)
      assert.equal((await client.waitForOrchestration('real-1', 30_000)).output, 42)
    } finally {
      await runtime.shutdown(2000)
      await provider.close()
    }
    const { code, report, stderr } = await doctorJson(schema)
    assert.equal(code, 0, `${stderr}\n${JSON.stringify(report, null, 2)}`)
    assertReportShape(report)
    assert.equal(report.kind, 'steadfast')
    assert.equal(report.schemaVersion, SCHEMA_VERSION)
    assert.equal(report.healthy, true)
    assert.ok(report.checks.every((c) => c.status === 'ok'), JSON.stringify(report.checks, null, 2))
  })
})

describe('duroxide-pg schema', () => {
  let schema
  let q

  before(async () => {
    schema = schemaName('dx')
    q = `"${schema}"`
    await createDuroxideSchema(db, schema)
    const nowMs = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
    await db.query(`
      INSERT INTO ${q}.instance_locks (instance_id, lock_token, locked_until, locked_at)
        VALUES ('trapped-1', 'lock_stale', ${nowMs} - 5 * 86400000, ${nowMs} - 5 * 86400000 - 30000);
      INSERT INTO ${q}.orchestrator_queue (instance_id, work_item, visible_at, lock_token, locked_until, created_at, attempt_count)
        VALUES ('trapped-1', '{"StartOrchestration":{}}', clock_timestamp() - interval '5 days 1 hour', 'lock_stale',
                ${nowMs} - 5 * 86400000, clock_timestamp() - interval '5 days 1 hour', 78987),
               ('fresh-1', '{}', clock_timestamp(), NULL, NULL, clock_timestamp(), 0);
      INSERT INTO ${q}.worker_queue (work_item, visible_at, created_at, instance_id, execution_id, activity_id)
        VALUES ('{}', clock_timestamp(), clock_timestamp(), 'fresh-1', 1, 1);
    `)
  })

  test('recognised as duroxide-pg and unhealthy when attempt_count is past max_attempts', async () => {
    const { code, report, byName, stderr } = await doctorJson(schema)
    assert.equal(code, 1, stderr)
    assertReportShape(report)
    assert.equal(report.kind, 'duroxide-pg')
    assert.equal(report.schemaVersion, 26)
    assert.equal(report.healthy, false)
    assert.equal(byName.dead_letters, undefined) // duroxide-pg keeps none
    assert.equal(byName.attempts_over_max.status, 'fail')
    assert.equal(byName.attempts_over_max.value.maxAttemptCount, 78987)
    assert.equal(byName.attempts_over_max.value.top[0].instanceId, 'trapped-1')
    assert.equal(byName.expired_leases.status, 'fail')
    assert.equal(byName.expired_leases.value.instances.top[0].instanceId, 'trapped-1')
    assert.deepEqual(
      { ...byName.orchestrator_queue.value },
      { total: 2, ready: 2, delayed: 0, leased: 0, instances: 2, maxAttemptCount: 78987 },
    )
    const text = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '0'])
    assert.equal(text.code, 1)
    assert.match(text.stdout, /\(duroxide-pg, schema version 26\)/)
    assert.match(text.stdout, /^VERDICT: UNHEALTHY .*attempts_over_max/m)
  })

  test('a fetch blocked on the instance advisory lock is reported with its instance', async () => {
    const holder = await connect()
    const waiter = new pg.Client({ connectionString: DATABASE_URL, application_name: 'blocked-fetch' })
    waiter.on('error', () => {})
    await waiter.connect()
    try {
      // What duroxide-pg's fetch_orchestration_item does: pg_advisory_xact_lock(hashtext(instance)).
      await holder.query('BEGIN')
      await holder.query(`SELECT pg_advisory_xact_lock(hashtext('trapped-1'))`)
      await waiter.query('BEGIN')
      const blocked = waiter.query(`SELECT pg_advisory_xact_lock(hashtext('trapped-1'))`)
      await new Promise((r) => setTimeout(r, 300))
      const { byName } = await doctorJson(schema)
      const w = byName.lock_waiters
      assert.notEqual(w.status, 'ok', JSON.stringify(w))
      const mine = w.value.waiters.find((x) => x.applicationName === 'blocked-fetch')
      assert.ok(mine, JSON.stringify(w.value))
      assert.equal(mine.locktype, 'advisory')
      assert.equal(mine.instanceId, 'trapped-1')
      assert.ok(mine.blockedBy.length === 1)
      assert.match(w.detail, /advisory/)
      await holder.query('COMMIT')
      await blocked
      await waiter.query('COMMIT')
    } finally {
      await holder.query('ROLLBACK').catch(() => {})
      await holder.end()
      await waiter.end()
    }
  })
})

describe('errors', () => {
  const usage = async (args, pattern) => {
    const r = await doctor(['doctor', ...args])
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}\n${r.stdout}${r.stderr}`)
    assert.match(r.stderr, pattern)
    return r
  }

  test('usage errors exit 2 and name the flag', async () => {
    await usage([], /--url is required/)
    await usage(['--schema', 'x'], /--url is required/)
    await usage(['--url', DATABASE_URL, '--frobnicate'], /unknown option --frobnicate/)
    await usage(['--url', DATABASE_URL, '--max-attempts', 'ten'], /--max-attempts must be an integer/)
    await usage(['--url', DATABASE_URL, '--max-attempts', '0'], /--max-attempts must be an integer between 1 and 1000000 \(got 0\)/)
    await usage(['--url', DATABASE_URL, '--max-attempts'], /--max-attempts needs a value/)
    await usage(['--url', DATABASE_URL, '--sample-seconds', '-1'], /--sample-seconds must be an integer/)
    await usage(['--url', DATABASE_URL, '--sample-seconds', '1.5'], /--sample-seconds must be an integer/)
    await usage(['--url', DATABASE_URL, '--sample-seconds=999'], /--sample-seconds must be an integer between 0 and 300/)
    await usage(['--url', DATABASE_URL, '--schema', 'bad-name'], /--schema must be/)
    await usage(['--url', DATABASE_URL, '--url', DATABASE_URL], /--url given more than once/)
    await usage(['--url', 'mysql://u@h/db'], /--url must start with postgres:\/\/ or postgresql:\/\//)
    await usage(['--url', DATABASE_URL, '--json=yes'], /--json takes no value/)
    await usage(['--url', DATABASE_URL, 'extra'], /unexpected argument "extra"/)
    const top = await doctor(['frobnicate'])
    assert.equal(top.code, 2)
    assert.match(top.stderr, /unknown command "frobnicate"/)
    const help = await doctor(['doctor', '--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, /--sample-seconds N/)
    const bare = await doctor([])
    assert.equal(bare.code, 2)
    assert.match(bare.stderr, /Usage: steadfast <command>/)
  })

  test('an unknown schema or an unrecognised layout exits 2 with a clear message', async () => {
    const missing = await doctor(['doctor', '--url', DATABASE_URL, '--schema', 'sf_doctor_no_such_schema'])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /schema "sf_doctor_no_such_schema" does not exist/)
    const other = schemaName('other')
    await db.query(`CREATE SCHEMA "${other}"; CREATE TABLE "${other}".orders (id int)`)
    const r = await doctor(['doctor', '--url', DATABASE_URL, '--schema', other, '--json'])
    assert.equal(r.code, 2)
    assert.match(r.stderr, /is not a steadfast schema .* nor a duroxide-pg schema .*it has orders/)
    assert.equal(JSON.parse(r.stdout).error.code, 'schema')
    // A steadfast-looking schema missing a column doctor reads is refused, not misread.
    const partial = schemaName('partial')
    await createSteadfastSchema(db, partial)
    await db.query(`ALTER TABLE "${partial}".instance_leases DROP COLUMN locked_at`)
    const p = await doctor(['doctor', '--url', DATABASE_URL, '--schema', partial])
    assert.equal(p.code, 2)
    assert.match(p.stderr, /lacks instance_leases\.locked_at/)
  })

  test('the password in --url never appears in any output', async () => {
    const u = new URL(DATABASE_URL)
    if (!u.password) u.password = 'Doctor-S3cret-pw'
    const secret = decodeURIComponent(u.password)
    const withPw = u.toString()
    const schema = schemaName('pw')
    await createSteadfastSchema(db, schema)
    await db.query(`INSERT INTO "${schema}".instance_leases (instance_id) VALUES ('x');
                    INSERT INTO "${schema}".orchestrator_queue (instance_id, work_item) VALUES ('x', '{}')`)
    const bad = new URL(withPw)
    bad.port = '1'
    const runs = [
      ['doctor', '--url', withPw, '--schema', schema, '--sample-seconds', '0'],
      ['doctor', '--url', withPw, '--schema', schema, '--sample-seconds', '0', '--json'],
      ['doctor', `--url=${withPw}`, '--schema', 'sf_doctor_no_such_schema'],
      ['doctor', '--url', bad.toString(), '--json'], // connection refused
      ['doctor', '--url', withPw.replace(/:\d+\//, ':99999/')], // invalid port
      ['doctor', '--url', withPw.replace(/^postgres(ql)?:/, 'mysql:')], // wrong scheme
      ['doctor', '--url', withPw, '--max-attempts', 'x'], // usage error beside the URL
      ['doctor', withPw], // URL passed without --url
      ['doctor', '--url', `${withPw}${withPw.includes('?') ? '&' : '?'}password=${encodeURIComponent(secret)}`, '--schema', schema, '--sample-seconds', '0'],
    ]
    for (const args of runs) {
      const r = await doctor(args)
      const all = r.stdout + r.stderr
      assert.ok(!all.includes(secret), `password printed by ${args.slice(1).join(' ')}:\n${all}`)
      assert.ok(!all.includes(encodeURIComponent(secret)), `encoded password printed:\n${all}`)
      assert.ok(all.length > 0)
    }
    const ok = await doctor(runs[0])
    assert.equal(ok.code, 0, ok.stderr)
    assert.match(ok.stdout, /on postgres(ql)?:\/\/[^:\s]+:\*\*\*@/)
    const refused = await doctor(runs[3])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /cannot connect to postgres(ql)?:\/\/[^:\s]+:\*\*\*@/)
  })
})
