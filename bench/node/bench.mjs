#!/usr/bin/env node
// Node benchmarks of steadfast (issue 4, scenarios 5 and 6), in one invocation:
//
//  5. binding overhead: the trivial one-activity orchestration through the Node binding
//     (this process, the repo's `lib/` on the addon built by cargo) against the same
//     workload in Rust (`steadfast-node-baseline`, bench/node/rust-baseline), same runtime
//     options, same provider (steadfast-pg), same database, at each dispatcher count;
//  6. peer: DBOS Transact for TypeScript running a trivial one-step workflow on the same
//     PostgreSQL, with the same closed loop.
//
// Every run uses a fresh schema and drops it afterwards. Progress goes to stderr; the JSON
// results file is rewritten after every run. See bench/README.md.

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

const USAGE = `usage: node bench/node/bench.mjs [--smoke] [--profile release|debug]
                                [--dispatchers 1,2,4,8,16,32] [--window-s S] [--in-flight N]
                                [--pool N] [--peer dbos|none] [--out FILE] [--database-url URL]

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
  --peer          dbos (default) or none
  --out           results file; default bench/node/results/node-<epoch>.json
                  (target/bench-node-smoke-<epoch>.json with --smoke)
  --database-url  default $STEADFAST_BENCH_DATABASE_URL, $STEADFAST_TEST_DATABASE_URL,
                  or postgres://postgres@127.0.0.1:5432/test`

const MAX_ATTEMPTS = 10
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
    peer: 'dbos',
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
      case '--peer': {
        a.peer = next()
        if (!['dbos', 'none'].includes(a.peer)) fail(`--peer must be dbos or none (got ${JSON.stringify(a.peer)})`)
        break
      }
      case '--out': a.out = next(); break
      case '--database-url': a.databaseUrl = next(); break
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0)
      // falls through (exit)
      default: fail(`unknown argument ${JSON.stringify(flag)}\n\n${USAGE}`)
    }
  }
  if (a.pool < 2) fail('--pool must be at least 2 (steadfast-pg keeps two connections open)')
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
  const c = new PgClient({ connectionString: databaseUrl })
  try {
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } catch (e) {
    progress(`warning: could not drop schema ${schema}: ${e.message}`)
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
  const c = new PgClient({ connectionString: databaseUrl })
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
  const c = new PgClient({ connectionString: databaseUrl })
  await c.connect()
  try {
    const info = {}
    for (const [key, sql] of [
      ['version', 'select version() as v'],
      ['max_connections', 'show max_connections'],
      ['synchronous_commit', 'show synchronous_commit'],
    ]) {
      const r = await c.query(sql)
      info[key] = Object.values(r.rows[0])[0]
    }
    return info
  } finally {
    await c.end()
  }
}

function loadavg() {
  return round2(os.loadavg()[0])
}

// ---------------------------------------------------------------------------------------
// The three implementations of one run
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
  ]
  const before = await databaseWork(a.databaseUrl)
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      env: { ...process.env, STEADFAST_BENCH_DATABASE_URL: a.databaseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
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
  const provider = await PostgresProvider.connectWithOptions({ url: a.databaseUrl, schema, maxConnections: a.pool })
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
    result = await closedLoopOf(a, `node x${dispatchers}`, async (id) => {
      await client.startOrchestration(id, 'Trivial', 'x')
      const s = await client.waitForOrchestration(id, 60_000)
      if (s.status !== 'Completed') throw new Error(`${id}: ${s.status} ${s.error ?? ''}`)
    })
  } finally {
    await rt.shutdown(1000).catch(() => {})
    await provider.close().catch(() => {})
    if (result) result.database = await workPerCompletion(a.databaseUrl, before, result.completed_total)
    await dropSchema(a.databaseUrl, schema)
  }
  return { implementation: 'node', dispatchers, ...result }
}

/** DBOS Transact: a one-step workflow, started and awaited by the same closed loop. */
async function runDbos(a) {
  const { DBOS } = await import('@dbos-inc/dbos-sdk')
  const schema = uniqueSchema('dbos')
  const poolSize = 2 * a.pool
  DBOS.setConfig({
    name: 'steadfast-bench',
    systemDatabaseUrl: a.databaseUrl,
    systemDatabaseSchemaName: schema,
    systemDatabasePoolSize: poolSize,
    logLevel: 'warn',
  })
  const noop = async (input) => input
  const trivial = DBOS.registerWorkflow(async (input) => DBOS.runStep(() => noop(input), { name: 'noop' }), {
    name: 'trivial',
  })
  let result
  let before
  try {
    await DBOS.launch()
    before = await databaseWork(a.databaseUrl)
    result = await closedLoopOf(a, 'dbos', async (id) => {
      const handle = await DBOS.startWorkflow(trivial, { workflowID: id })('x')
      await handle.getResult()
    })
  } finally {
    await DBOS.shutdown().catch(() => {})
    if (result) result.database = await workPerCompletion(a.databaseUrl, before, result.completed_total)
    await dropSchema(a.databaseUrl, schema)
  }
  return {
    implementation: 'dbos',
    sdk_version: JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json'), 'utf8')).version,
    system_database_pool_size: poolSize,
    ...result,
  }
}

// ---------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------

function summarize(overhead, peer) {
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
  return s
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
    },
    overhead: [],
    peer: null,
    summary: null,
  }
  const write = () => {
    fs.mkdirSync(path.dirname(out), { recursive: true })
    report.summary = summarize(report.overhead, report.peer)
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
  if (a.peer === 'dbos') {
    const loadBefore = loadavg()
    progress(`=== peer: DBOS Transact, one-step workflows, ${a.inFlight} in flight ===`)
    const dbos = await runDbos(a)
    progress(`dbos: ${dbos.orchestrations_per_s} workflows/s (p50 ${dbos.latency_ms.p50} ms, p99 ${dbos.latency_ms.p99} ms)`)
    report.peer = { ...dbos, load_average_before: loadBefore, load_average_after: loadavg() }
    write()
    if (!(dbos.completed_total > 0)) noProgress(a, 'DBOS: no workflow completed')
  }
  write()
  const s = report.summary
  progress(
    `summary: node best ${s.node_best_orchestrations_per_s} orch/s, rust best ${s.rust_best_orchestrations_per_s} orch/s` +
      (report.peer ? `, dbos ${s.dbos_workflows_per_s} workflows/s (node / dbos = ${s.node_best_over_dbos})` : ''),
  )
  progress(`results written to ${path.relative(process.cwd(), out)}`)
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench.mjs: error: ${e?.stack ?? e}\n`)
    process.exit(1)
  },
)
