// Fixtures of the doctor tests: a steadfast schema made by the provider's own migrations,
// connections to the test database, and the doctor command line run as a child process.
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const require = createRequire(import.meta.url)
export const pg = require('pg')

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const BIN = path.join(ROOT, 'bin', 'steadfast.js')
export const DATABASE_URL = process.env.STEADFAST_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'
const MIGRATIONS_DIR = path.join(ROOT, 'crates/steadfast-pg/migrations')
/** Every migration of the provider, in order: { version, name, text } (files NNNN_name.sql). */
const MIGRATIONS = readdirSync(MIGRATIONS_DIR)
  .filter((f) => /^\d{4}_\w+\.sql$/.test(f))
  .sort()
  .map((f) => ({ version: Number(f.slice(0, 4)), name: f.slice(5, -4), text: readFileSync(path.join(MIGRATIONS_DIR, f), 'utf8') }))
export const SCHEMA_VERSION = MIGRATIONS.at(-1).version
const BOOTSTRAP = readFileSync(path.join(ROOT, 'crates/steadfast-pg/queries/migrate_bootstrap.sql'), 'utf8')

const created = []

export async function dropCreatedSchemas(db) {
  for (const s of created.splice(0)) await db.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`)
}

/** A fresh schema name; dropCreatedSchemas drops every one handed out. */
export function schemaName(label) {
  const s = `sf_doctor_${label}_${randomBytes(4).toString('hex')}`
  created.push(s)
  return s
}

export async function connect() {
  const c = new pg.Client({ connectionString: DATABASE_URL })
  c.on('error', () => {})
  await c.connect()
  return c
}

/** FNV-1a 64 of the migration text, as steadfast-pg records it in schema_migrations. */
function checksum(text) {
  let h = 0xcbf29ce484222325n
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= BigInt(b)
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return h.toString(16).padStart(16, '0')
}

/** A steadfast schema's tables as the provider's migrations make them: bootstrap, every migration, its record. */
export async function createSteadfastSchema(db, schema) {
  const q = `"${schema}"`
  await db.query(BOOTSTRAP.replaceAll('__SCHEMA__', q))
  for (const m of MIGRATIONS) {
    await db.query(m.text.replaceAll('__SCHEMA__', q))
    await db.query(`INSERT INTO ${q}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`, [m.version, m.name, checksum(m.text)])
  }
}

/** Run the CLI (`bin`: another copy of it); resolves to { code, stdout, stderr, ms }. */
export function doctor(args, { timeoutMs = 60_000, bin = BIN } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`doctor did not finish within ${timeoutMs} ms: ${stdout}${stderr}`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
}
