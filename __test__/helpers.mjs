// Shared helpers for the node:test suites.
import { after, before } from 'node:test'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// duroxide installs a process-wide log subscriber on the first start(); keep test output to
// errors unless the caller asks for more (e.g. RUST_LOG=warn npm test).
process.env.RUST_LOG ??= 'error'

const require = createRequire(import.meta.url)
export const steadfast = require('../lib/index.js')

export const DATABASE_URL = process.env.STEADFAST_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'

/** Runtime options that keep tests fast: short polling, quiet logs. */
export const FAST = Object.freeze({ dispatcherPollIntervalMs: 10, logLevel: 'error', logFormat: 'compact' })

/** FAST, and a message to an activity nobody registers is redelivered once, then failed as poison. */
export const POISON_FAST = Object.freeze({
  ...FAST,
  maxAttempts: 1,
  unregisteredBackoffBaseMs: 10,
  unregisteredBackoffMaxMs: 50,
  redeliveryBackoffBaseMs: 10,
  redeliveryBackoffCapMs: 100,
})

export function uid(prefix = 'i') {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/**
 * Run `fn` and return what it threw as { name, code, message }, null when it did not throw
 * (plain data, so an orchestration can return it for the test to check).
 */
export function thrown(fn) {
  try {
    fn()
    return null
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message }
  }
}

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function until(fn, timeoutMs = 10_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** A PostgreSQL schema of its own for one test file, dropped by `drop()`. */
export async function pgSchema(label) {
  const schema = `sf_node_${label}_${randomBytes(4).toString('hex')}`
  return {
    schema,
    async drop() {
      const pg = require('pg')
      const client = new pg.Client({ connectionString: DATABASE_URL })
      await client.connect()
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await client.end()
      }
    },
  }
}

/**
 * A schema for tests whose workers are other processes: a client-side provider on it, a
 * plain `pg` connection (`db`) for inspecting its tables, and `close()` for all three.
 */
export async function workerSchema(label) {
  const s = await pgSchema(label)
  const provider = await steadfast.PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 2 })
  const db = new (require('pg').Client)({ connectionString: DATABASE_URL })
  await db.connect()
  return {
    schema: s.schema,
    provider,
    db,
    async close() {
      await db.end()
      await provider.close()
      await s.drop()
    },
  }
}

/** A fixtures/hung-worker.mjs process on `schema` in `role` ('hung' or 'healthy'). */
export function hungWorker(schema, role, releaseFile) {
  return spawnWorker('hung-worker.mjs', [DATABASE_URL, schema, role, releaseFile])
}

/**
 * Inside a describe() block: a Runtime on `backend` (see backends()) with `options`, set up by
 * `register(runtime)`, started before the block's tests and shut down after them. The
 * returned object gets `runtime` and `client` once started.
 */
export function runtimeOn(backend, options, register) {
  const fx = {}
  before(async () => {
    fx.env = await backend.open()
    fx.runtime = new steadfast.Runtime(fx.env.provider, options)
    register(fx.runtime)
    await fx.runtime.start()
    fx.client = new steadfast.Client(fx.env.provider)
  })
  after(async () => {
    await fx.runtime?.shutdown(2000)
    await fx.env?.cleanup()
  })
  return fx
}

/** Backends every workflow suite runs on. */
export function backends(label) {
  return [
    {
      name: 'sqlite',
      // A file, not inMemory(): duroxide's in-memory database is one shared-cache database,
      // where a deletion racing the runtime's dispatchers fails with SQLITE_LOCKED
      // ("database is deadlocked") instead of waiting (seen in client-api.test.mjs).
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'steadfast-test-'))
        return {
          provider: await steadfast.SqliteProvider.open(join(dir, 'store.db')),
          async cleanup() {
            rmSync(dir, { recursive: true, force: true })
          },
        }
      },
    },
    { name: 'postgres', open: () => postgresStore(label) },
  ]
}

/** A provider on a PostgreSQL schema of its own: `{ schema, provider, cleanup() }`, cleanup dropping the schema. */
export async function postgresStore(label) {
  const s = await pgSchema(label)
  const provider = await steadfast.PostgresProvider.connectWithOptions({ url: DATABASE_URL, schema: s.schema, maxConnections: 4 })
  return {
    schema: s.schema,
    provider,
    async cleanup() {
      await provider.close()
      await s.drop()
    },
  }
}

/**
 * Start `node fixtures/<fixture> ...args` with stdin and stdout piped. `lines` collects what it
 * prints; `ready` resolves once it printed "ready"; `exited` resolves with { code, signal };
 * `waitFor(predicate, ms)` resolves with the first line (printed so far or later) matching it.
 */
export function spawnWorker(fixture, args) {
  const script = fileURLToPath(new URL(`./fixtures/${fixture}`, import.meta.url))
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = []
  const waiters = new Set()
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line)
    for (const w of waiters) w(line)
  })
  const waitFor = (predicate, timeoutMs = 30_000, what = 'a line') =>
    new Promise((resolve, reject) => {
      const found = lines.find(predicate)
      if (found !== undefined) return resolve(found)
      const timer = setTimeout(() => done(new Error(`worker ${child.pid}: timed out waiting for ${what}`)), timeoutMs)
      const check = (line) => predicate(line) && done(null, line)
      function done(err, line) {
        clearTimeout(timer)
        waiters.delete(check)
        err ? reject(err) : resolve(line)
      }
      waiters.add(check)
      exited.then(({ code, signal }) => done(new Error(`worker ${child.pid} exited (code ${code}, signal ${signal}) before ${what}`)))
    })
  const ready = waitFor((l) => l === 'ready', 60_000, 'ready')
  return { child, lines, ready, exited, waitFor }
}
