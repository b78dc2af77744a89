// doctor's statements are the provider's named queries (crates/steadfast-pg/queries/doctor_*.sql):
// every file is one of doctor's statements, lib/doctor holds no SQL of its own but the
// upstream duroxide-pg layout's, every statement doctor sends to a steadfast schema is a
// rendered named query, and the npm package ships the files where an installed doctor reads them.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import {
  DATABASE_URL,
  ROOT,
  pg,
  connect,
  createSteadfastSchema,
  doctor,
  dropCreatedSchemas,
  schemaName,
} from './doctor-fixtures.mjs'

const require = createRequire(import.meta.url)
const { QUERY_DIR, PREFIX, renderSql } = require('../lib/doctor/queries.js')

const DOCTOR_DIR = path.join(ROOT, 'lib', 'doctor')
/** The upstream layout's statements; the only SQL lib/doctor may hold. */
const DUROXIDE_MODULE = 'duroxide-pg.js'
const STEADFAST_ONLY_TABLES = ['instance_leases', 'dead_letters', 'schema_migrations']

/** doctor_<name>.sql -> { name: text } */
const NAMED = Object.fromEntries(
  readdirSync(QUERY_DIR)
    .filter((f) => f.startsWith(PREFIX) && f.endsWith('.sql'))
    .map((f) => [f.slice(PREFIX.length, -4), readFileSync(path.join(QUERY_DIR, f), 'utf8')]),
)
const SOURCES = Object.fromEntries(
  readdirSync(DOCTOR_DIR)
    .filter((f) => f.endsWith('.js'))
    .map((f) => [f, readFileSync(path.join(DOCTOR_DIR, f), 'utf8')]),
)

/** String and template literals of JavaScript source, outside comments. */
function jsLiterals(source) {
  const out = []
  let i = 0
  while (i < source.length) {
    const c = source[i]
    if (c === '/' && source[i + 1] === '/') i = source.indexOf('\n', i) >>> 0
    else if (c === '/' && source[i + 1] === '*') i = source.indexOf('*/', i) + 2
    else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1
      out.push(source.slice(i + 1, j))
      i = j + 1
    } else i++
  }
  return out
}

const SQL_SHAPES = [
  /\b(SELECT|WITH)\b[\s\S]*\bFROM\b/,
  /\b(INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM)\b/,
  /\bSET\s+\w+\s*(=|TO)\s/,
  /\b(BEGIN|COMMIT|LOCK\s+TABLE)\b/,
]
const looksLikeSql = (text) => SQL_SHAPES.some((re) => re.test(text))

let db
before(async () => {
  db = await connect()
})
after(async () => {
  await dropCreatedSchemas(db)
  await db.end()
})

test('the literal scanner sees SQL in JavaScript strings and not in messages', () => {
  const sample = "const a = `SELECT x FROM ${S}.t` // SELECT y FROM z\nconst b = 'SET lock_timeout = 1'; const c = \"needs SELECT on the tables\""
  const literals = jsLiterals(sample)
  assert.deepEqual(literals.map(looksLikeSql), [true, true, false])
})

test('every doctor_*.sql file is a statement doctor runs, and lib/doctor names no other', () => {
  assert.ok(Object.keys(NAMED).length >= 10, Object.keys(NAMED).join(', '))
  const code = Object.values(SOURCES).join('\n')
  for (const name of Object.keys(NAMED)) {
    assert.match(code, new RegExp(`\\b(q|COMMON_QUERIES|STEADFAST_TEMPLATES)\\.${name}\\b`), `doctor_${name}.sql is not used`)
  }
  for (const m of code.matchAll(/\b(?:COMMON_QUERIES|STEADFAST_TEMPLATES)\.(\w+)/g)) {
    assert.ok(m[1] in NAMED, `lib/doctor reads a query doctor_${m[1]}.sql that does not exist`)
  }
  for (const [name, sql] of Object.entries(NAMED)) {
    const statements = sql.replace(/--.*$/gm, '').split(';').filter((s) => s.trim())
    assert.equal(statements.length, 1, `doctor_${name}.sql holds one statement`)
    assert.match(sql, /^-- doctor: /, `doctor_${name}.sql starts with what it returns`)
  }
})

test('lib/doctor holds no SQL but the duroxide-pg layout, which reads no table only steadfast has', () => {
  for (const [file, source] of Object.entries(SOURCES)) {
    if (file === DUROXIDE_MODULE) continue
    for (const literal of jsLiterals(source)) assert.ok(!looksLikeSql(literal), `${file}: SQL of its own: ${literal}`)
  }
  const upstream = jsLiterals(SOURCES[DUROXIDE_MODULE]).filter(looksLikeSql)
  assert.ok(upstream.length >= 5)
  for (const literal of upstream) {
    for (const table of STEADFAST_ONLY_TABLES) assert.ok(!literal.includes(table), `${DUROXIDE_MODULE} reads ${table}`)
  }
})

test('every statement doctor sends to a steadfast schema is a rendered named query, and each one is sent', async () => {
  const schema = schemaName('named')
  await createSteadfastSchema(db, schema)
  await db.query(`INSERT INTO "${schema}".instance_leases (instance_id) VALUES ('n-1');
                  INSERT INTO "${schema}".orchestrator_queue (instance_id, work_item) VALUES ('n-1', '{}')`)
  // A backend waiting on an advisory lock makes doctor look up the instance behind its key.
  const holder = await connect()
  const waiter = await connect()
  const sent = []
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function (config, ...rest) {
    if (this.connectionParameters.application_name === 'steadfast-doctor') sent.push(typeof config === 'string' ? config : config.text)
    return query.call(this, config, ...rest)
  }
  try {
    await holder.query('BEGIN')
    await holder.query(`SELECT pg_advisory_xact_lock(hashtext('n-1'))`)
    const blocked = waiter.query(`SELECT pg_advisory_xact_lock(hashtext('n-1'))`)
    await new Promise((r) => setTimeout(r, 200))
    const { runDoctor } = require('../lib/doctor/index.js')
    const report = await runDoctor({ url: DATABASE_URL, schema, sampleSeconds: 1, maxAttempts: 10 })
    await holder.query('COMMIT')
    await blocked
    assert.equal(report.kind, 'steadfast')
    const named = new Map(Object.entries(NAMED).map(([name, sql]) => [renderSql(sql, schema), name]))
    const used = new Set()
    for (const text of sent) {
      const name = named.get(text) ?? named.get(text.replace(/^EXPLAIN /, ''))
      assert.ok(name, `doctor sent a statement that is no named query:\n${text}`)
      used.add(name)
    }
    assert.deepEqual([...used].sort(), Object.keys(NAMED).sort())
  } finally {
    pg.Client.prototype.query = query
    await holder.query('ROLLBACK').catch(() => {})
    await holder.end()
    await waiter.end()
  }
})

test('the npm package ships the queries where the installed doctor reads them', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'steadfast-doctor-pack-'))
  try {
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' }))
    const files = packed.files.map((f) => f.path)
    for (const name of Object.keys(NAMED)) assert.ok(files.includes(`crates/steadfast-pg/queries/doctor_${name}.sql`), name)
    assert.ok(!files.some((f) => f.startsWith('crates/') && !/\/doctor_\w+\.sql$/.test(f)), 'only doctor queries from crates/')
    // Installed as npm would lay it out, beside the optional peer pg; no addon needed.
    const installed = path.join(dir, 'node_modules', 'steadfast')
    mkdirSync(installed, { recursive: true })
    execFileSync('tar', ['xzf', path.join(dir, packed.filename), '-C', installed, '--strip-components=1'])
    symlinkSync(path.join(ROOT, 'node_modules', 'pg'), path.join(dir, 'node_modules', 'pg'))
    const schema = schemaName('packed')
    await createSteadfastSchema(db, schema)
    const r = await doctor(['doctor', '--url', DATABASE_URL, '--schema', schema, '--sample-seconds', '0', '--json'], {
      bin: path.join(installed, 'bin', 'steadfast.js'),
    })
    assert.equal(r.code, 0, r.stdout + r.stderr)
    assert.equal(JSON.parse(r.stdout).kind, 'steadfast')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
