// The published packages as a user gets them: the root and linux-x64-gnu tarballs that
// ./scripts/package.sh wrote to target/npm-pack/, installed into a fresh project with no
// Rust toolchain on PATH. The README's quickstarts (ES module and CommonJS, SQLite) run as
// written, a typed usage file passes tsc under moduleResolution nodenext against the
// installed typings, the doctor CLI answers --help, and its named queries are installed. The
// release binary (OpenSSL linked in statically) speaks TLS to the local PostgreSQL with
// verify-full: it connects to the host the server's certificate names, and refuses another.
// Run by scripts/packed-install-test.sh.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { QUICKSTART_OUTPUT, ROOT, readmeQuickstarts } from '../readme-quickstarts.mjs'
import { assertBinaryFromPlatformPackage, installPacked } from './installed-project.mjs'

const PLATFORM = 'linux-x64-gnu'
let project, env, run, remove

before(() => {
  ;({ dir: project, env, run, remove } = installPacked(PLATFORM))
})

after(() => remove?.())

test('the binary comes from the platform package, not from a build', () => {
  assertBinaryFromPlatformPackage(project, PLATFORM)
})

for (const [kind, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  test(`the README's ${kind} quickstart runs against the installed package`, { timeout: 60_000 }, () => {
    const file = join(project, `quickstart.${ext}`)
    writeFileSync(file, readmeQuickstarts()[kind])
    const out = run(process.execPath, [file])
    for (const line of QUICKSTART_OUTPUT) assert.match(out, line)
  })
}

test('a typed usage file passes tsc under moduleResolution nodenext', { timeout: 60_000 }, () => {
  copyFileSync(join(ROOT, '__test__', 'esm', 'types-check.mts'), join(project, 'usage.mts'))
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        skipLibCheck: false,
      },
      files: ['usage.mts'],
    }),
  )
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'])
})

test("the installed package holds doctor's named queries where lib/doctor reads them", () => {
  const dir = join('crates', 'steadfast-pg', 'queries')
  const doctorQueries = (root) => readdirSync(join(root, dir)).filter((f) => /^doctor_\w+\.sql$/.test(f)).sort()
  assert.deepEqual(doctorQueries(join(project, 'node_modules', 'steadfast')), doctorQueries(ROOT))
})

test('the doctor CLI answers --help, and names its one extra package when it is missing', () => {
  const cli = join(project, 'node_modules', '.bin', 'steadfast')
  assert.match(run(cli, ['--help']), /doctor/)
  assert.ok(!readdirSync(join(project, 'node_modules')).includes('pg'), 'pg is not installed with steadfast')
  const r = spawnSync(cli, ['doctor', '--url', 'postgres://nobody@127.0.0.1:1/none'], { cwd: project, env, encoding: 'utf8' })
  assert.equal(r.status, 2, r.stderr)
  assert.match(r.stderr, /needs the PostgreSQL client package 'pg': npm install pg/)
})

const SERVER_CERT = '/etc/ssl/certs/ssl-cert-snakeoil.pem'
/** The certificate names `localhost`; 127.0.0.1 is the same server under a name it does not carry. */
const NAMED_HOST = 'localhost'
const UNNAMED_HOST = '127.0.0.1'

/** Why the local server cannot serve the TLS test (null when it can). */
function tlsUnavailable() {
  const r = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'test', '-Atc', 'SHOW ssl; SHOW ssl_cert_file'], { encoding: 'utf8' })
  if (r.status !== 0) return `psql failed: ${r.stderr}`
  const [ssl, certFile] = r.stdout.trim().split('\n')
  if (ssl !== 'on') return 'the local PostgreSQL runs with ssl = off'
  if (certFile !== SERVER_CERT || !existsSync(SERVER_CERT)) return `the server certificate is ${certFile}, not Debian's ${SERVER_CERT}`
  return null
}

test('the release binary speaks TLS: verify-full connects to the host the certificate names and refuses another', { timeout: 120_000, skip: tlsUnavailable() ?? false }, () => {
  const app = `steadfast-packed-tls-${process.pid}`
  const schema = `sf_packed_tls_${process.pid}`
  const url = (host) => `postgres://postgres@${host}:5432/test?sslmode=verify-full&sslrootcert=${SERVER_CERT}&application_name=${app}`
  const file = join(project, 'tls.mjs')
  writeFileSync(
    file,
    `import { createRequire } from 'node:module'
const require = createRequire(import.meta.url)
const { PostgresProvider, Runtime, Client } = require('steadfast')
const pg = require(${JSON.stringify(join(ROOT, 'node_modules', 'pg'))})
const db = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' })
await db.connect()
try {
  await PostgresProvider.connectWithOptions({ url: ${JSON.stringify(url(UNNAMED_HOST))}, schema: '${schema}' })
  console.log('other host: connected')
} catch (e) {
  console.log('other host: ' + e.code + ' ' + /certificate verify failed/.test(e.message))
}
const provider = await PostgresProvider.connectWithOptions({ url: ${JSON.stringify(url(NAMED_HOST))}, schema: '${schema}', maxConnections: 2 })
const runtime = new Runtime(provider, { dispatcherPollIntervalMs: 10, logLevel: 'error' })
runtime.registerOrchestration('Hello', function* () { return 'over tls' })
await runtime.start()
const client = new Client(provider)
await client.startOrchestration('tls-1', 'Hello', null)
console.log('output: ' + (await client.waitForOrchestration('tls-1', 30000)).output)
const { rows } = await db.query('SELECT count(*)::int AS n, bool_and(s.ssl) AS ssl FROM pg_stat_ssl AS s JOIN pg_stat_activity AS a USING (pid) WHERE a.application_name = $1', ['${app}'])
console.log('connections: ' + rows[0].n + ' tls: ' + rows[0].ssl)
await runtime.shutdown(1000)
await provider.close()
await db.query('DROP SCHEMA IF EXISTS "${schema}" CASCADE')
await db.end()
`,
  )
  const out = run(process.execPath, [file])
  assert.match(out, /^other host: ERR_STEADFAST_PROVIDER_OPEN true$/m)
  assert.match(out, /^output: over tls$/m)
  const m = /^connections: (\d+) tls: (\w+)$/m.exec(out)
  assert.ok(m, out)
  assert.ok(Number(m[1]) > 0, out)
  assert.equal(m[2], 'true', out)
})
