// bench.mjs's command line and connection URLs, without a database, the addon or the Rust
// baseline: `node --test bench/node/` (or `npm test` in bench/node). Importing bench.mjs
// does not start a run; a rejected argument makes it exit 2 before it loads anything.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { nodePgUrl, parseArgs, sqlxSslMode } from './bench.mjs'

const BENCH = fileURLToPath(new URL('./bench.mjs', import.meta.url))

/** `node bench.mjs ...args`; resolves to { code, stdout, stderr }. */
function bench(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BENCH, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err)
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

test('--peer: dbos (the default) runs both DBOS variants; dbos-direct, dbos-queue and none pick', () => {
  assert.deepEqual(parseArgs([]).peers, { direct: true, queue: true })
  assert.equal(parseArgs([]).peer, 'dbos')
  assert.deepEqual(parseArgs(['--peer', 'dbos']).peers, { direct: true, queue: true })
  assert.deepEqual(parseArgs(['--peer', 'dbos-direct']).peers, { direct: true, queue: false })
  assert.deepEqual(parseArgs(['--peer=dbos-queue']).peers, { direct: false, queue: true })
  assert.deepEqual(parseArgs(['--peer', 'none']).peers, { direct: false, queue: false })
  assert.equal(parseArgs(['--peer', 'dbos-queue']).peer, 'dbos-queue')
})

test("--polling: steadfast's mode, listen by default", () => {
  assert.equal(parseArgs([]).polling, 'listen')
  assert.equal(parseArgs(['--polling', 'session-free']).polling, 'session-free')
})

test('the DBOS queue variant polling intervals: defaults and values', () => {
  const d = parseArgs(['--smoke'])
  assert.equal(d.dbosQueuePollMs, 20)
  assert.equal(d.dbosResultPollMs, 100)
  const a = parseArgs(['--peer', 'dbos-queue', '--dbos-queue-poll-ms', '5', '--dbos-result-poll-ms=250'])
  assert.equal(a.dbosQueuePollMs, 5)
  assert.equal(a.dbosResultPollMs, 250)
})

test('rejected --peer and polling values name the flag and the rule, and exit 2', async () => {
  for (const [args, message] of [
    [['--peer', 'bogus'], '--peer must be dbos, dbos-direct, dbos-queue or none (got "bogus")'],
    [['--peer', 'DBOS'], '--peer must be dbos, dbos-direct, dbos-queue or none (got "DBOS")'],
    [['--peer', 'dbos,none'], '--peer must be dbos, dbos-direct, dbos-queue or none (got "dbos,none")'],
    [['--peer'], '--peer needs a value'],
    [['--polling', 'sessionFree'], '--polling must be listen or session-free (got "sessionFree")'],
    [['--dbos-queue-poll-ms', '0'], '--dbos-queue-poll-ms must be an integer from 1 to 10000 (got "0")'],
    [['--dbos-result-poll-ms', '1.5'], '--dbos-result-poll-ms must be an integer from 1 to 10000 (got "1.5")'],
    [
      ['--peer', 'none', '--dbos-queue-poll-ms', '5'],
      '--dbos-queue-poll-ms applies to the DBOS queue variant only (--peer dbos or dbos-queue; got --peer none)',
    ],
    [
      ['--dbos-result-poll-ms', '5', '--peer', 'dbos-direct'],
      '--dbos-result-poll-ms applies to the DBOS queue variant only (--peer dbos or dbos-queue; got --peer dbos-direct)',
    ],
  ]) {
    const r = await bench(...args)
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.ok(r.stderr.startsWith(`bench.mjs: ${message}`), `${args.join(' ')}: ${r.stderr}`)
  }
})

test('--help lists the --peer values and the polling flags', async () => {
  const r = await bench('--help')
  assert.equal(r.code, 0)
  assert.match(r.stdout, /--peer dbos\|dbos-direct\|dbos-queue\|none/)
  assert.match(r.stdout, /--dbos-queue-poll-ms/)
  assert.match(r.stdout, /--dbos-result-poll-ms/)
})

test("sqlxSslMode: the URL's sslmode (or ssl-mode), else $PGSSLMODE, else prefer", () => {
  const saved = process.env.PGSSLMODE
  try {
    delete process.env.PGSSLMODE
    assert.equal(sqlxSslMode('postgres://u@h/db'), 'prefer')
    assert.equal(sqlxSslMode('postgres://u@h/db?sslmode=disable'), 'disable')
    assert.equal(sqlxSslMode('postgres://u@h/db?ssl-mode=require'), 'require')
    process.env.PGSSLMODE = 'require'
    assert.equal(sqlxSslMode('postgres://u@h/db'), 'require')
    assert.equal(sqlxSslMode('postgres://u@h/db?sslmode=disable'), 'disable')
  } finally {
    if (saved === undefined) delete process.env.PGSSLMODE
    else process.env.PGSSLMODE = saved
  }
})

test("nodePgUrl: libpq's sslmode for node-postgres, sqlx's spellings translated", () => {
  const q = (url, o) => Object.fromEntries(new URL(nodePgUrl(url, o)).searchParams)
  assert.deepEqual(q('postgres://u@h:5432/db'), {})
  assert.deepEqual(q('postgres://u@h:5432/db?sslmode=require'), { sslmode: 'require', uselibpqcompat: 'true' })
  assert.deepEqual(q('postgres://u@h:5432/db?ssl-mode=allow'), { sslmode: 'disable', uselibpqcompat: 'true' })
  assert.deepEqual(q('postgres://u@h:5432/db', { sslmode: 'require', applicationName: 'x' }), {
    sslmode: 'require',
    uselibpqcompat: 'true',
    application_name: 'x',
  })
  assert.deepEqual(q('postgres://u@h:5432/db?ssl-root-cert=/ca.pem&statement-cache-capacity=0&sslmode=verify-full'), {
    sslrootcert: '/ca.pem',
    sslmode: 'verify-full',
    uselibpqcompat: 'true',
  })
  const u = new URL(nodePgUrl('postgres://u:p@h:5432/db?sslmode=disable'))
  assert.equal(u.username, 'u')
  assert.equal(u.password, 'p')
  assert.equal(u.pathname, '/db')
})
