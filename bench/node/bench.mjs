#!/usr/bin/env node
// Node benchmarks of steadfast (issue 4, scenarios 5 and 6), in one invocation:
//
//  5. binding overhead: the trivial one-activity orchestration through the Node binding
//     (this process, the repo's `lib/` on the addon built by cargo) against the same
//     workload in Rust (`steadfast-node-baseline`, bench/node/rust-baseline), same runtime
//     options, same provider (steadfast-pg), same database, at each dispatcher count;
//  6. peers: DBOS Transact for TypeScript running a trivial one-step workflow on the same
//     PostgreSQL, with the same closed loop, in two variants: started directly
//     (`DBOS.startWorkflow`, run in the calling process) and enqueued on a `WorkflowQueue`
//     whose worker concurrency is the dispatcher count (queue to queue, at each count).
//
// Every run uses a fresh schema and drops it afterwards. Every contender connects with the
// same transport (TCP or socket, TLS or not, as the URL and the server make steadfast's sqlx
// connect), and each run's transport is read back from pg_stat_ssl. Progress goes to stderr;
// the JSON results file is rewritten after every run. See bench/README.md.

import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { closedLoop } from './closed-loop.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(HERE, '..', '..')
const require = createRequire(import.meta.url)

const MAX_ATTEMPTS = 10
// The DBOS queue variant's polling intervals (see USAGE and bench/README.md).
const DEFAULT_DBOS_QUEUE_POLL_MS = 20
const DEFAULT_DBOS_RESULT_POLL_MS = 100
const PEERS = {
  dbos: { direct: true, queue: true },
  'dbos-direct': { direct: true, queue: false },
  'dbos-queue': { direct: false, queue: true },
  none: { direct: false, queue: false },
}

const USAGE = `usage: node bench/node/bench.mjs [--smoke] [--profile release|debug]
                                [--dispatchers 1,2,4,8,16,32] [--window-s S] [--in-flight N]
                                [--pool N] [--polling listen|session-free]
                                [--peer dbos|dbos-direct|dbos-queue|none]
                                [--dbos-queue-poll-ms MS] [--dbos-result-poll-ms MS]
                                [--out FILE] [--database-url URL]

  --smoke         seconds-long run (what CI runs): 2 dispatchers, 8 in flight, 2 s windows,
                  debug build; a run goes on past its window until something completed
                  (at most 120 s) and the smoke fails only if nothing did
  --profile       which cargo build of the addon and the Rust baseline to load; default
                  release (debug with --smoke). Build them first:
                  cargo build [--release] -p steadfast-node -p steadfast-node-baseline
  --dispatchers   orchestration (= worker) dispatcher counts; default 1,2,4,8,16,32
  --window-s      measured seconds per run, after a warm-up; default 8
  --in-flight     instances kept in flight by the closed loop; default 64
  --pool          connections per steadfast-pg pool (the client's and the runtime's);
                  DBOS gets twice this for its one pool; default 16
  --polling       steadfast's polling mode, for the binding and the Rust baseline alike:
                  listen (LISTEN/NOTIFY) or session-free (no session state, as behind a
                  transaction-mode pooler; connected to --database-url); default listen
  --peer          which DBOS Transact variants run after the steadfast runs:
                  dbos (default: both), dbos-direct (DBOS.startWorkflow, once),
                  dbos-queue (enqueued on a WorkflowQueue whose workerConcurrency is the
                  dispatcher count, at each count) or none
  --dbos-queue-poll-ms
                  DBOS queue variant only: the queue's minPollingIntervalMs (DBOS claims
                  queued workflows by polling); default ${DEFAULT_DBOS_QUEUE_POLL_MS} (the SDK's is 1000)
  --dbos-result-poll-ms
                  DBOS queue variant only: handle.getResult's pollingIntervalMs (a queued
                  workflow's handle polls its status row); default ${DEFAULT_DBOS_RESULT_POLL_MS} (the SDK's is 1000)
  --out           results file; default bench/node/results/node-<epoch>.json
                  (target/bench-node-smoke-<epoch>.json with --smoke)
  --database-url  default $STEADFAST_BENCH_DATABASE_URL, $STEADFAST_TEST_DATABASE_URL,
                  or postgres://postgres@127.0.0.1:5432/test`

// Same log settings for the binding and the baseline (duroxide's own subscriber). RUST_LOG,
// inherited by the baseline, keeps other crates' warnings (sqlx's slow acquires on a loaded
// machine) out of the progress output of both.
const LOG_LEVEL = 'error'
process.env.RUST_LOG ??= 'error'

function fail(message) {
  process.stderr.write(`bench.mjs: ${message}\n`)
  process.exit(2)
}

export function parseArgs(argv) {
  const a = {
    smoke: false,
    profile: null,
    dispatchers: null,
    windowS: null,
    inFlight: null,
    pool: 16,
    polling: 'listen',
    peer: 'dbos',
    dbosQueuePollMs: DEFAULT_DBOS_QUEUE_POLL_MS,
    dbosResultPollMs: DEFAULT_DBOS_RESULT_POLL_MS,
    out: null,
    databaseUrl:
      process.env.STEADFAST_BENCH_DATABASE_URL ||
      process.env.STEADFAST_TEST_DATABASE_URL ||
      'postgres://postgres@127.0.0.1:5432/test',
  }
  const positiveInt = (name, v, max) => {
    const n = Number(v)
    if (!Number.isInteger(n) || n < 1 || n > max) fail(`${name} must be an integer from 1 to ${max} (got ${JSON.stringify(v)})`)
    return n
  }
  let pollGiven = false
  for (let i = 0; i < argv.length; i++) {
    let flag = argv[i]
    let value
    if (flag.startsWith('--') && flag.includes('=')) [flag, value] = [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)]
    const next = () => {
      if (value !== undefined) return value
      if (i + 1 >= argv.length) fail(`${flag} needs a value\n\n${USAGE}`)
      return argv[++i]
    }
    switch (flag) {
      case '--smoke': a.smoke = true; break
      case '--profile': {
        a.profile = next()
        if (!['release', 'debug'].includes(a.profile)) fail(`--profile must be release or debug (got ${JSON.stringify(a.profile)})`)
        break
      }
      case '--dispatchers': a.dispatchers = next().split(',').map((v) => positiveInt('--dispatchers', v, 1024)); break
      case '--window-s': {
        const v = Number(next())
        if (!(v > 0 && v <= 3600)) fail('--window-s must be a number of seconds in (0, 3600]')
        a.windowS = v
        break
      }
      case '--in-flight': a.inFlight = positiveInt('--in-flight', next(), 10000); break
      case '--pool': a.pool = positiveInt('--pool', next(), 100); break
      case '--polling': {
        a.polling = next()
        if (!['listen', 'session-free'].includes(a.polling)) fail(`--polling must be listen or session-free (got ${JSON.stringify(a.polling)})`)
        break
      }
      case '--peer': {
        a.peer = next()
        if (!Object.hasOwn(PEERS, a.peer)) fail(`--peer must be dbos, dbos-direct, dbos-queue or none (got ${JSON.stringify(a.peer)})`)
        break
      }
      case '--dbos-queue-poll-ms': a.dbosQueuePollMs = positiveInt(flag, next(), 10000); pollGiven = flag; break
      case '--dbos-result-poll-ms': a.dbosResultPollMs = positiveInt(flag, next(), 10000); pollGiven = flag; break
      case '--out': a.out = next(); break
      case '--database-url': a.databaseUrl = next(); break
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0)
      // falls through (exit)
      default: fail(`unknown argument ${JSON.stringify(flag)}\n\n${USAGE}`)
    }
  }
  if (a.pool < 2) fail('--pool must be at least 2 (steadfast-pg keeps two connections open)')
  a.peers = { ...PEERS[a.peer] }
  if (pollGiven && !a.peers.queue) fail(`${pollGiven} applies to the DBOS queue variant only (--peer dbos or dbos-queue; got --peer ${a.peer})`)
  a.profile ??= a.smoke ? 'debug' : 'release'
  a.dispatchers ??= a.smoke ? [2] : [1, 2, 4, 8, 16, 32]
  a.windowS ??= a.smoke ? 2 : 8
  a.inFlight ??= a.smoke ? 8 : 64
  a.warmupS = a.smoke ? 2 : 3
  // Smoke runs go on past their window until something completed (at most this long).
  a.untilFirstS = a.smoke ? 120 : 0
  return a
}

const t0 = Date.now()
function progress(message) {
  process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(7)}s] ${message}\n`)
}

const round2 = (v) => Math.round(v * 100) / 100
const ratio = (num, den) => (den > 0 && Number.isFinite(num) ? Math.round((num / den) * 1000) / 1000 : null)

// ---------------------------------------------------------------------------------------
// Set-up: the addon, the baseline binary, schemas
// ---------------------------------------------------------------------------------------

/** Loads the repo's `lib/` on `target/<profile>`'s addon (not whatever .node sits at the root). */
function loadSteadfast(profile) {
  const so = path.join(ROOT, 'target', profile, 'libsteadfast_node.so')
  if (!fs.existsSync(so)) {
    fail(`${path.relative(ROOT, so)} is missing: run cargo build${profile === 'release' ? ' --release' : ''} -p steadfast-node -p steadfast-node-baseline`)
  }
  // Node loads addons by their .node extension; copy next to the build output.
  const addon = path.join(ROOT, 'target', profile, 'steadfast-bench-addon.node')
  const stale = !fs.existsSync(addon) || fs.statSync(addon).mtimeMs < fs.statSync(so).mtimeMs
  if (stale) fs.copyFileSync(so, addon)
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = addon
  return { steadfast: require(path.join(ROOT, 'lib', 'index.js')), addon: path.relative(ROOT, addon) }
}

function baselineBinary(profile) {
  const bin = path.join(ROOT, 'target', profile, 'steadfast-node-baseline')
  if (!fs.existsSync(bin)) {
    fail(`${path.relative(ROOT, bin)} is missing: run cargo build${profile === 'release' ? ' --release' : ''} -p steadfast-node -p steadfast-node-baseline`)
  }
  return bin
}

const runTag = String(Math.floor(t0 / 1000) % 1_000_000_000)
function uniqueSchema(label) {
  return `sfbn_${runTag}_${label}_${randomBytes(3).toString('hex')}`.toLowerCase()
}

async function dropSchema(databaseUrl, schema) {
  const { Client: PgClient } = require('pg')
  const c = new PgClient({ connectionString: nodePgUrl(databaseUrl) })
  try {
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } catch (e) {
    progress(`warning: could not drop schema ${schema}: ${e.message}`)
  } finally {
    await c.end().catch(() => {})
  }
}

/** Schemas of this invocation still in the database (each run drops its own; none should be left). */
async function leftoverSchemas(databaseUrl) {
  const { Client: PgClient } = require('pg')
  const c = new PgClient({ connectionString: nodePgUrl(databaseUrl) })
  await c.connect()
  try {
    const { rows } = await c.query(`SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY 1`, [`sfbn_${runTag}_`])
    return rows.map((r) => r.nspname)
  } finally {
    await c.end().catch(() => {})
  }
}

/**
 * The database's own counters of work done (all sessions): committed and rolled-back
 * transactions, rows inserted, updated and deleted. Read after the run's connections are
 * closed (a backend reports its counts when it exits) and before its schema is dropped.
 */
async function databaseWork(databaseUrl) {
  const { Client: PgClient } = require('pg')
  const c = new PgClient({ connectionString: nodePgUrl(databaseUrl) })
  await c.connect()
  try {
    const { rows } = await c.query(
      `SELECT (xact_commit + xact_rollback)::float8 AS transactions,
              (tup_inserted + tup_updated + tup_deleted)::float8 AS rows_written
       FROM pg_stat_database WHERE datname = current_database()`,
    )
    return rows[0]
  } finally {
    await c.end().catch(() => {})
  }
}

/** Work per completed instance between two `databaseWork` readings (the reading's own few transactions included). */
async function workPerCompletion(databaseUrl, before, completed) {
  await new Promise((r) => setTimeout(r, 700)) // let the closed connections' backends exit and report
  const after = await databaseWork(databaseUrl)
  const per = (k) => (completed > 0 ? Math.round(((after[k] - before[k]) / completed) * 10) / 10 : null)
  return { transactions_per_completion: per('transactions'), rows_written_per_completion: per('rows_written') }
}

async function databaseInfo(databaseUrl) {
  const { Client: PgClient } = require('pg')
  const c = new PgClient({ connectionString: nodePgUrl(databaseUrl) })
  await c.connect()
  try {
    const info = {}
    for (const [key, sql] of [
      ['version', 'select version() as v'],
      ['max_connections', 'show max_connections'],
      ['synchronous_commit', 'show synchronous_commit'],
      ['ssl', 'show ssl'],
    ]) {
      const r = await c.query(sql)
      info[key] = Object.values(r.rows[0])[0]
    }
    return info
  } finally {
    await c.end()
  }
}

// ---------------------------------------------------------------------------------------
// Connections and their transport
// ---------------------------------------------------------------------------------------

/**
 * The sslmode steadfast's sqlx connects with: the URL's (`sslmode`, or sqlx's `ssl-mode`),
 * else $PGSSLMODE, else sqlx's default, `prefer`.
 */
export function sqlxSslMode(databaseUrl) {
  const q = new URL(databaseUrl).searchParams
  return q.get('sslmode') ?? q.get('ssl-mode') ?? process.env.PGSSLMODE ?? 'prefer'
}

/**
 * `databaseUrl` for node-postgres. `sslmode` (the argument, else the URL's) keeps libpq's
 * meaning (`uselibpqcompat=true`: node-postgres alone reads require as verify-full, and
 * encrypts with prefer and allow); `allow` becomes `disable`, since sqlx tries without TLS
 * first and node-postgres has no fallback. sqlx's own spellings become libpq's.
 */
export function nodePgUrl(databaseUrl, { sslmode, applicationName } = {}) {
  const u = new URL(databaseUrl)
  const q = u.searchParams
  const mode = sslmode ?? q.get('sslmode') ?? q.get('ssl-mode')
  for (const [sqlx, libpq] of [['ssl-root-cert', 'sslrootcert'], ['ssl-ca', 'sslrootcert'], ['ssl-cert', 'sslcert'], ['ssl-key', 'sslkey']]) {
    if (q.has(sqlx)) q.set(libpq, q.get(sqlx))
    q.delete(sqlx)
  }
  for (const k of ['sslmode', 'ssl-mode', 'uselibpqcompat', 'statement-cache-capacity']) q.delete(k)
  if (mode) {
    q.set('sslmode', mode === 'allow' ? 'disable' : mode)
    q.set('uselibpqcompat', 'true')
  }
  if (applicationName) q.set('application_name', applicationName)
  return u.toString()
}

/** `databaseUrl` with `application_name` set, so the run's connections can be told apart in pg_stat_activity. */
function withApplicationName(databaseUrl, applicationName) {
  const u = new URL(databaseUrl)
  u.searchParams.set('application_name', applicationName)
  return u.toString()
}

/** Whether `databaseUrl` connects through a Unix-domain socket (a host that is a directory). */
function isSocketUrl(databaseUrl) {
  const u = new URL(databaseUrl)
  return (u.searchParams.get('host') ?? decodeURIComponent(u.hostname)).startsWith('/')
}

/**
 * The URL DBOS connects with: the same transport as steadfast's sqlx on `databaseUrl`.
 * sqlx's `prefer` encrypts over TCP when the server has ssl on, never over a socket
 * (node-postgres would not fall back, so it is `require` or `disable` here); `allow` does
 * not encrypt.
 */
export async function dbosUrl(databaseUrl, applicationName) {
  let mode = sqlxSslMode(databaseUrl)
  if (mode === 'prefer') {
    mode = !isSocketUrl(databaseUrl) && (await databaseInfo(databaseUrl)).ssl === 'on' ? 'require' : 'disable'
  }
  return nodePgUrl(databaseUrl, { sslmode: mode, applicationName })
}

/**
 * How the connections whose application_name contains `tag` reach the server, read from
 * pg_stat_ssl joined with pg_stat_activity: `tcp` or `unix`, `+tls` when encrypted.
 */
export async function transportOf(databaseUrl, tag) {
  const { Client: PgClient } = require('pg')
  const c = new PgClient({ connectionString: nodePgUrl(databaseUrl) })
  await c.connect()
  try {
    const { rows } = await c.query(
      `SELECT CASE WHEN a.client_addr IS NULL THEN 'unix' ELSE 'tcp' END
                || CASE WHEN s.ssl THEN '+tls' ELSE '' END AS transport,
              s.version AS tls_version, count(*)::int AS connections
       FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
       WHERE strpos(a.application_name, $1) > 0 AND a.pid <> pg_backend_pid()
       GROUP BY 1, 2 ORDER BY 1, 2`,
      [tag],
    )
    if (rows.length === 0) return { transport: null, connections: 0 }
    if (rows.length === 1) return rows[0]
    return { transport: 'mixed', connections: rows.reduce((n, r) => n + r.connections, 0), groups: rows }
  } finally {
    await c.end().catch(() => {})
  }
}

/** The run's transport, sampled once at the end of its warm-up (its connections are open then). */
function sampleTransport(a, tag) {
  return new Promise((r) => setTimeout(r, a.warmupS * 1000))
    .then(() => transportOf(a.databaseUrl, tag))
    .catch((e) => ({ transport: null, error: e.message }))
}

/** One label for several runs' transports: the common one, else `mixed`; null if none was seen. */
function commonTransport(samples) {
  const seen = [...new Set(samples.map((t) => t?.transport).filter(Boolean))]
  return seen.length === 0 ? null : seen.length === 1 ? seen[0] : 'mixed'
}

function loadavg() {
  return round2(os.loadavg()[0])
}

// ---------------------------------------------------------------------------------------
// The implementations of one run
// ---------------------------------------------------------------------------------------

/** The closed loop of one Node-side run, with the run's timing (the same for every implementation). */
function closedLoopOf(a, label, once) {
  return closedLoop({ label, inFlight: a.inFlight, warmupS: a.warmupS, windowS: a.windowS, untilFirstS: a.untilFirstS, progress, once })
}

/** The Rust baseline, as a child process; resolves its JSON summary. */
async function runRust(a, bin, dispatchers) {
  const schema = uniqueSchema(`rs${dispatchers}`)
  const args = [
    '--schema', schema,
    '--dispatchers', String(dispatchers),
    '--in-flight', String(a.inFlight),
    '--warmup-ms', String(Math.round(a.warmupS * 1000)),
    '--window-ms', String(Math.round(a.windowS * 1000)),
    '--until-first-ms', String(Math.round(a.untilFirstS * 1000)),
    '--pool', String(a.pool),
    '--max-attempts', String(MAX_ATTEMPTS),
    '--log-level', LOG_LEVEL,
    '--polling', a.polling,
  ]
  const before = await databaseWork(a.databaseUrl)
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      env: { ...process.env, STEADFAST_BENCH_DATABASE_URL: withApplicationName(a.databaseUrl, schema) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const transport = sampleTransport(a, schema)
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('exit', async (code, signal) => {
      let result = null
      let error = null
      try {
        if (code !== 0) throw new Error(`rust baseline exited with ${code ?? signal}`)
        result = JSON.parse(out.trim().split('\n').pop())
        result.database = await workPerCompletion(a.databaseUrl, before, result.completed_total)
        result.transport = await transport
      } catch (e) {
        error = e.message.startsWith('rust baseline') ? e : new Error(`rust baseline printed no JSON: ${e.message}`)
      }
      await dropSchema(a.databaseUrl, schema)
      if (error) reject(error)
      else resolve(result)
    })
  })
}

/** The same workload through the Node binding, in this process. */
async function runNode(a, steadfast, dispatchers) {
  const { PostgresProvider, Client, Runtime } = steadfast
  const schema = uniqueSchema(`js${dispatchers}`)
  const url = withApplicationName(a.databaseUrl, schema)
  const polling = a.polling === 'session-free' ? 'sessionFree' : 'listen'
  const provider = await PostgresProvider.connectWithOptions({ url, schema, maxConnections: a.pool, polling })
  const rt = new Runtime(provider, {
    orchestrationConcurrency: dispatchers,
    workerConcurrency: dispatchers,
    maxAttempts: MAX_ATTEMPTS,
    logLevel: LOG_LEVEL,
  })
  rt.registerActivity('Noop', (_ctx, input) => input)
  rt.registerOrchestration('Trivial', function* (ctx, input) {
    return yield ctx.scheduleActivity('Noop', input)
  })
  const client = new Client(provider)
  const before = await databaseWork(a.databaseUrl)
  let result
  try {
    await rt.start()
    const transport = sampleTransport(a, schema)
    result = await closedLoopOf(a, `node x${dispatchers}`, async (id) => {
      await client.startOrchestration(id, 'Trivial', 'x')
      const s = await client.waitForOrchestration(id, 60_000)
      if (s.status !== 'Completed') throw new Error(`${id}: ${s.status} ${s.error ?? ''}`)
    })
    result.transport = await transport
  } finally {
    await rt.shutdown(1000).catch(() => {})
    await provider.close().catch(() => {})
    if (result) result.database = await workPerCompletion(a.databaseUrl, before, result.completed_total)
    await dropSchema(a.databaseUrl, schema)
  }
  return { implementation: 'node', dispatchers, ...result }
}

/**
 * DBOS Transact: a one-step workflow in the same closed loop, in one of two variants:
 *
 * - `direct`: started with `DBOS.startWorkflow`, which runs it in this process at once;
 *   `handle.getResult()` awaits that in-process promise;
 * - `queue`: enqueued with `DBOS.startWorkflow(.., { queueName })` on a queue registered with
 *   `workerConcurrency: dispatchers` (this process runs at most that many of its workflows
 *   at a time, as steadfast's runtime runs at most N turns and N activities) and
 *   `minPollingIntervalMs: a.dbosQueuePollMs`; DBOS's dispatch loop claims them by polling
 *   the queue, and `handle.getResult({ pollingIntervalMs: a.dbosResultPollMs })` polls the
 *   workflow's status row (DBOS has no wake-up for either).
 *
 * Each run has its own system schema (dropped afterwards) and a pool of 2 × `--pool`
 * connections, on the same transport as steadfast (`dbosUrl`). DBOS creates a database only
 * when the URL's is missing; the bench's exists (it connected to it first), so the schema is
 * all it creates. Exported, with `parseArgs`, so the DBOS part can be run on its own.
 */
export async function runDbos(a, { variant = 'direct', dispatchers = null } = {}) {
  if (!['direct', 'queue'].includes(variant)) throw new Error(`runDbos: variant must be direct or queue (got ${JSON.stringify(variant)})`)
  if (variant === 'queue' && !(Number.isInteger(dispatchers) && dispatchers > 0)) throw new Error('runDbos: the queue variant needs a dispatcher count')
  const { DBOS } = await import('@dbos-inc/dbos-sdk')
  const queued = variant === 'queue'
  const schema = uniqueSchema(queued ? `dbq${dispatchers}` : 'dbos')
  const label = queued ? `dbos-queue x${dispatchers}` : 'dbos'
  const poolSize = 2 * a.pool
  DBOS.setConfig({
    name: 'steadfast-bench',
    // application_name = the schema's name, for every connection of the run (node-postgres
    // takes the URL's over the pool's own dbos_transact_<executor>_<version>), so that the
    // run's transport can be read back.
    systemDatabaseUrl: await dbosUrl(a.databaseUrl, schema),
    systemDatabaseSchemaName: schema,
    systemDatabasePoolSize: poolSize,
    logLevel: 'warn',
  })
  const noop = async (input) => input
  const trivial = DBOS.registerWorkflow(async (input) => DBOS.runStep(() => noop(input), { name: 'noop' }), {
    name: 'trivial',
  })
  const queueOptions = queued ? { workerConcurrency: dispatchers, minPollingIntervalMs: a.dbosQueuePollMs } : null
  let result
  let before
  try {
    await DBOS.launch()
    const queue = queued ? await DBOS.registerQueue('trivial', queueOptions) : null
    before = await databaseWork(a.databaseUrl)
    const transport = sampleTransport(a, schema)
    result = await closedLoopOf(
      a,
      label,
      queued
        ? async (id) => {
            const handle = await DBOS.startWorkflow(trivial, { workflowID: id, queueName: queue.name })('x')
            await handle.getResult({ pollingIntervalMs: a.dbosResultPollMs })
          }
        : async (id) => {
            const handle = await DBOS.startWorkflow(trivial, { workflowID: id })('x')
            await handle.getResult()
          },
    )
    result.transport = await transport
  } finally {
    // Deregistered, so that the next run can register its workflow again after its launch.
    await DBOS.shutdown({ deregister: true }).catch(() => {})
    if (result) result.database = await workPerCompletion(a.databaseUrl, before, result.completed_total)
    await dropSchema(a.databaseUrl, schema)
  }
  return {
    implementation: queued ? 'dbos-queue' : 'dbos',
    variant,
    ...(queued
      ? {
          dispatchers,
          queue: { worker_concurrency: dispatchers, min_polling_interval_ms: a.dbosQueuePollMs, get_result_polling_interval_ms: a.dbosResultPollMs },
        }
      : {}),
    sdk_version: JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json'), 'utf8')).version,
    system_database_pool_size: poolSize,
    ...result,
  }
}

// ---------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------

function summarize(overhead, peer, peerQueue) {
  const best = (rows, key) => rows.reduce((m, r) => Math.max(m, r[key]?.orchestrations_per_s ?? 0), 0)
  const s = {
    node_best_orchestrations_per_s: best(overhead, 'node'),
    rust_best_orchestrations_per_s: best(overhead, 'rust'),
  }
  s.overhead_at_best = ratio(s.rust_best_orchestrations_per_s - s.node_best_orchestrations_per_s, s.rust_best_orchestrations_per_s)
  if (peer) {
    s.dbos_workflows_per_s = peer.orchestrations_per_s
    s.node_best_over_dbos = ratio(s.node_best_orchestrations_per_s, peer.orchestrations_per_s)
    s.rust_best_over_dbos = ratio(s.rust_best_orchestrations_per_s, peer.orchestrations_per_s)
  }
  if (peerQueue?.runs.length) {
    const top = peerQueue.runs.reduce((m, r) => (r.orchestrations_per_s > m.orchestrations_per_s ? r : m))
    s.dbos_queue_best_workflows_per_s = top.orchestrations_per_s
    s.dbos_queue_best_at_dispatchers = top.dispatchers
    s.node_best_over_dbos_queue = ratio(s.node_best_orchestrations_per_s, top.orchestrations_per_s)
    s.rust_best_over_dbos_queue = ratio(s.rust_best_orchestrations_per_s, top.orchestrations_per_s)
  }
  return s
}

/** Each contender's transport (from its runs' pg_stat_ssl samples), and whether they are the same. */
function transportSummary(report) {
  const t = {
    steadfast: commonTransport(report.overhead.flatMap((r) => [r.rust?.transport, r.node?.transport])),
    dbos: report.peer ? commonTransport([report.peer.transport]) : undefined,
    dbos_queue: report.peer_queue ? commonTransport(report.peer_queue.runs.map((r) => r.transport)) : undefined,
  }
  const seen = Object.values(t).filter((v) => v !== undefined)
  t.same_for_all = seen.every((v) => v !== null && v !== 'mixed') ? new Set(seen).size <= 1 : null
  t.how =
    "pg_stat_ssl joined with pg_stat_activity on each run's application_name (its schema's name), sampled at the end of " +
    'its warm-up; steadfast connects with sqlx (sslmode from the URL, else $PGSSLMODE, else prefer), DBOS with ' +
    'node-postgres on the same URL with the sslmode that gives the same transport'
  return t
}

/** A smoke run fails when a run made no progress; a full run records it and goes on. */
function noProgress(a, message) {
  if (a.smoke) throw new Error(message)
  progress(`warning: ${message}`)
}

async function main() {
  const a = parseArgs(process.argv.slice(2))
  const out = path.resolve(
    a.out ?? (a.smoke ? path.join(ROOT, 'target', `bench-node-smoke-${runTag}.json`) : path.join(HERE, 'results', `node-${runTag}.json`)),
  )
  const { steadfast, addon } = loadSteadfast(a.profile)
  const bin = baselineBinary(a.profile)
  const database = await databaseInfo(a.databaseUrl).catch((e) => fail(`database not reachable: ${e.message}`))
  progress(
    `bench.mjs${a.smoke ? ' (smoke)' : ''}: ${a.profile} build, dispatchers [${a.dispatchers}], ${a.inFlight} in flight, ` +
      `warm-up ${a.warmupS} s + window ${a.windowS} s, pool ${a.pool}, peer ${a.peer}, results -> ${path.relative(process.cwd(), out)}`,
  )
  if (loadavg() > 1.5) progress(`warning: the machine is busy (load average ${loadavg()}); numbers will be skewed`)
  const report = {
    schema_version: 1,
    started_at_epoch_s: Math.floor(t0 / 1000),
    command: ['node', ...process.argv.slice(1).map((p) => (path.isAbsolute(p) ? path.relative(ROOT, p) : p))].join(' '),
    smoke: a.smoke,
    profile: a.profile,
    addon,
    node_version: process.version,
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, memory_gib: round2(os.totalmem() / 2 ** 30) },
    database,
    workload: {
      orchestration: 'Trivial: one activity (Noop, returns its input), then complete',
      in_flight: a.inFlight,
      warmup_s: a.warmupS,
      window_s: a.windowS,
      completion: 'each loop starts an instance and awaits it (client.waitForOrchestration / PostgresProvider::wait_for_orchestration, both woken by the execution-end notification / handle.getResult)',
      runtime_options: { orchestrationConcurrency: 'N', workerConcurrency: 'N', maxAttempts: MAX_ATTEMPTS, logLevel: LOG_LEVEL },
      pool_per_steadfast_pool: a.pool,
      steadfast_polling: a.polling,
    },
    overhead: [],
    peer: null,
    peer_queue: null,
    transport: null,
    summary: null,
  }
  if (a.peers.direct || a.peers.queue) {
    report.workload.peers = {
      dbos: a.peers.direct ? 'DBOS.startWorkflow (runs the workflow in this process at once), handle.getResult() awaits its promise; once' : null,
      dbos_queue: a.peers.queue
        ? `DBOS.startWorkflow with queueName, on a WorkflowQueue with workerConcurrency N (the dispatcher count) and ` +
          `minPollingIntervalMs ${a.dbosQueuePollMs}; handle.getResult({ pollingIntervalMs: ${a.dbosResultPollMs} }); at each dispatcher count`
        : null,
      system_database_pool_size: 2 * a.pool,
    }
  }
  const write = () => {
    fs.mkdirSync(path.dirname(out), { recursive: true })
    report.transport = transportSummary(report)
    report.summary = summarize(report.overhead, report.peer, report.peer_queue)
    fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
  }
  for (const [i, n] of a.dispatchers.entries()) {
    const loadBefore = loadavg()
    const measureRust = async () => {
      progress(`=== binding overhead, ${n} dispatchers: Rust baseline ===`)
      const r = await runRust(a, bin, n)
      progress(`rust x${n}: ${r.orchestrations_per_s} orch/s (p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms)`)
      return r
    }
    const measureNode = async () => {
      progress(`=== binding overhead, ${n} dispatchers: Node binding ===`)
      return runNode(a, steadfast, n)
    }
    // Alternate which goes first, so neither always pays for a cold database.
    let rust, node
    if (i % 2 === 0) {
      rust = await measureRust()
      node = await measureNode()
    } else {
      node = await measureNode()
      rust = await measureRust()
    }
    const overhead = ratio(rust.orchestrations_per_s - node.orchestrations_per_s, rust.orchestrations_per_s)
    progress(
      `node x${n}: ${node.orchestrations_per_s} orch/s (p50 ${node.latency_ms.p50} ms, p99 ${node.latency_ms.p99} ms); ` +
        `overhead ${overhead === null ? '–' : (overhead * 100).toFixed(1) + ' %'}`,
    )
    report.overhead.push({
      dispatchers: n,
      measured_first: i % 2 === 0 ? 'rust' : 'node',
      rust,
      node,
      node_over_rust: ratio(node.orchestrations_per_s, rust.orchestrations_per_s),
      overhead,
      load_average_before: loadBefore,
      load_average_after: loadavg(),
    })
    write()
    if (!(rust.completed_total > 0 && node.completed_total > 0)) {
      noProgress(a, `${n} dispatchers: no orchestration completed (rust ${rust.completed_total}, node ${node.completed_total})`)
    }
  }
  if (a.peers.direct) {
    const loadBefore = loadavg()
    progress(`=== peer: DBOS Transact, one-step workflows started directly, ${a.inFlight} in flight ===`)
    const dbos = await runDbos(a)
    progress(`dbos: ${dbos.orchestrations_per_s} workflows/s (p50 ${dbos.latency_ms.p50} ms, p99 ${dbos.latency_ms.p99} ms)`)
    report.peer = { ...dbos, load_average_before: loadBefore, load_average_after: loadavg() }
    write()
    if (!(dbos.completed_total > 0)) noProgress(a, 'DBOS: no workflow completed')
  }
  if (a.peers.queue) {
    report.peer_queue = { runs: [] }
    for (const n of a.dispatchers) {
      const loadBefore = loadavg()
      progress(`=== peer: DBOS Transact, one-step workflows on a WorkflowQueue, worker concurrency ${n}, ${a.inFlight} in flight ===`)
      const q = await runDbos(a, { variant: 'queue', dispatchers: n })
      progress(`dbos-queue x${n}: ${q.orchestrations_per_s} workflows/s (p50 ${q.latency_ms.p50} ms, p99 ${q.latency_ms.p99} ms)`)
      const same = report.overhead.find((r) => r.dispatchers === n)
      report.peer_queue.runs.push({
        ...q,
        node_over_dbos_queue: ratio(same?.node.orchestrations_per_s, q.orchestrations_per_s),
        rust_over_dbos_queue: ratio(same?.rust.orchestrations_per_s, q.orchestrations_per_s),
        load_average_before: loadBefore,
        load_average_after: loadavg(),
      })
      write()
      if (!(q.completed_total > 0)) noProgress(a, `DBOS queue, worker concurrency ${n}: no workflow completed`)
    }
  }
  write()
  const s = report.summary
  const t = report.transport
  progress(
    `summary: node best ${s.node_best_orchestrations_per_s} orch/s, rust best ${s.rust_best_orchestrations_per_s} orch/s` +
      (report.peer ? `, dbos ${s.dbos_workflows_per_s} workflows/s (node / dbos = ${s.node_best_over_dbos})` : '') +
      (report.peer_queue
        ? `, dbos-queue best ${s.dbos_queue_best_workflows_per_s} workflows/s (worker concurrency ${s.dbos_queue_best_at_dispatchers}) ` +
          `(node / dbos-queue = ${s.node_best_over_dbos_queue})`
        : ''),
  )
  progress(
    `transport: steadfast ${t.steadfast}` +
      (t.dbos !== undefined ? `, dbos ${t.dbos}` : '') +
      (t.dbos_queue !== undefined ? `, dbos-queue ${t.dbos_queue}` : ''),
  )
  const left = await leftoverSchemas(a.databaseUrl).catch((e) => [`(not checked: ${e.message})`])
  if (left.length) progress(`warning: schemas of this run were not dropped: ${left.join(', ')}`)
  if (t.same_for_all === false) noProgress(a, 'the contenders did not connect with the same transport (see "transport" in the results)')
  else if (t.same_for_all === null) progress('warning: the transport of some runs could not be read (see "transport" in the results)')
  progress(`results written to ${path.relative(process.cwd(), out)}`)
}

// Runs only as a script: tests and scripts import parseArgs and runDbos without starting it.
function isEntryPoint() {
  try {
    return fs.realpathSync(path.resolve(process.argv[1])) === fs.realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}
if (isEntryPoint()) {
  main().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`bench.mjs: error: ${e?.stack ?? e}\n`)
      process.exit(1)
    },
  )
}
