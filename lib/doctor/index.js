'use strict'

// `steadfast doctor`: a read-only health report of a steadfast or duroxide-pg schema.
// Every statement runs on its own (autocommit: a transaction of its own), read-only (the
// session's default), with short lock and statement timeouts, so doctor can neither change
// nor block the system it inspects: between statements it holds no lock, so a DDL statement
// (a migration, VACUUM FULL) never queues behind doctor's sampling window, and the claims
// that would queue behind that DDL never wait for doctor. The statements are the provider's
// named queries (./queries.js), or ./duroxide-pg.js for an upstream schema.

const { parseDoctorArgs, UsageError, USAGE } = require('./args')
const { inspectUrl, scrub } = require('../cli/url')
const { urlSecretsOfArgv } = require('../cli/args')
const { detectLayout, LayoutError } = require('./layout')
const { COMMON_QUERIES } = require('./queries')
const { snapshotChecks, THRESHOLDS } = require('./checks')
const { sampleChecks } = require('./sample')
const { buildReport, renderText, renderJson } = require('./report')

const EXIT = Object.freeze({ HEALTHY: 0, UNHEALTHY: 1, ERROR: 2 })

const TIMEOUTS = Object.freeze({ connectMs: 10_000, statement: '30s', lock: '2s' })

/**
 * An error that ends doctor with exit code 2; `code` is one of usage, dependency,
 * connection, schema, query.
 */
class DoctorError extends Error {
  constructor(code, message) {
    super(message)
    this.name = 'DoctorError'
    this.code = code
  }
}

/**
 * The PostgreSQL client, which only doctor uses: an optional peer dependency, so that an
 * application that never runs doctor does not install it.
 */
function loadPg() {
  try {
    return require('pg')
  } catch (e) {
    if (e && e.code === 'MODULE_NOT_FOUND' && /'pg'/.test(e.message)) {
      throw new DoctorError('dependency', "steadfast doctor needs the PostgreSQL client package 'pg': npm install pg (or npx -p pg -p steadfast steadfast doctor ...)")
    }
    throw e
  }
}

function describePgError(e, schema) {
  switch (e && e.code) {
    case '55P03':
      return `a table of schema "${schema}" is locked exclusively (DDL or VACUUM FULL?); doctor gave up after ${TIMEOUTS.lock} rather than wait`
    case '57014':
      return `a query ran longer than ${TIMEOUTS.statement} and was cancelled`
    case '42501':
      return `permission denied: ${e.message} (doctor needs SELECT on the schema's tables)`
    default:
      return e && e.message ? e.message : String(e)
  }
}

/**
 * Run the checks. `opts` is what parseDoctorArgs returns. Resolves to the report object;
 * rejects with DoctorError.
 */
async function runDoctor(opts) {
  const { url, display } = inspectUrl(opts.url)
  const pg = loadPg()
  const client = new pg.Client({
    connectionString: url,
    application_name: 'steadfast-doctor',
    connectionTimeoutMillis: TIMEOUTS.connectMs,
  })
  client.on('error', () => {}) // a dropped connection surfaces as a failed query
  try {
    await client.connect()
  } catch (e) {
    throw new DoctorError('connection', `cannot connect to ${display}: ${e && e.message ? e.message : e}`)
  }
  try {
    await client.query(COMMON_QUERIES.session_limits, [TIMEOUTS.statement, TIMEOUTS.lock])
    const info = (await client.query(COMMON_QUERIES.session)).rows[0]
    if (info.read_only !== 'on') throw new DoctorError('query', 'could not make the session read-only')

    let layout
    try {
      layout = await detectLayout(client, opts.schema, info.db)
    } catch (e) {
      if (e instanceof LayoutError) throw new DoctorError('schema', e.message)
      throw e
    }
    const q = layout.queries
    let schemaVersion = null
    if (q.schema_version) {
      const v = (await client.query(q.schema_version)).rows[0].version
      schemaVersion = v === null ? null : Number(v)
    }
    const checks = await snapshotChecks(client, { kind: layout.kind, q, maxAttempts: opts.maxAttempts })
    const { lockWaiters, fetchLatency } = await sampleChecks(client, {
      kind: layout.kind,
      q,
      seconds: opts.sampleSeconds,
      schemaOid: layout.oid,
      schema: opts.schema,
      claimClock: layout.kind === 'steadfast' ? 'database' : 'caller',
    })
    checks.push(lockWaiters, fetchLatency)
    return buildReport(
      {
        schema: opts.schema,
        kind: layout.kind,
        schemaVersion,
        database: display,
        checkedAt: info.checked_at,
        maxAttempts: opts.maxAttempts,
        sampleSeconds: opts.sampleSeconds,
      },
      checks,
    )
  } catch (e) {
    if (e instanceof DoctorError) throw e
    throw new DoctorError('query', describePgError(e, opts.schema))
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * The `doctor` command: parse `argv` (the arguments after `doctor`), run, print, and resolve
 * to the exit code. Never prints the URL's password.
 */
async function doctorMain(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  // Find the secrets first, so even a usage error about another flag cannot echo them.
  let { secrets, display } = urlSecretsOfArgv(argv)
  let json = argv.includes('--json')
  const fail = (code, message) => {
    const text = scrub(message, secrets, display)
    io.stderr.write(`steadfast doctor: ${text}\n`)
    if (code === 'usage') io.stderr.write('Run `steadfast doctor --help` for usage.\n')
    if (json) io.stdout.write(JSON.stringify({ healthy: null, error: { code, message: text } }, null, 2) + '\n')
    return EXIT.ERROR
  }
  let opts
  try {
    opts = parseDoctorArgs(argv)
    if (opts.help) {
      io.stdout.write(USAGE + '\n')
      return EXIT.HEALTHY
    }
    json = opts.json
    ;({ secrets, display } = inspectUrl(opts.url))
  } catch (e) {
    if (e instanceof UsageError) {
      if (e.secrets) secrets = [...new Set([...secrets, ...e.secrets])]
      return fail('usage', e.message)
    }
    throw e
  }
  let report
  try {
    report = await runDoctor(opts)
  } catch (e) {
    if (e instanceof DoctorError) return fail(e.code, e.message)
    return fail('internal', `unexpected error: ${e && e.stack ? e.stack : e}`)
  }
  // Report text comes from the database: mask only secrets long enough not to garble it.
  const width = io.stdout.isTTY && io.stdout.columns ? Math.max(60, io.stdout.columns) : 100
  const text = opts.json ? renderJson(report) : renderText(report, { width })
  io.stdout.write(scrub(text, secrets.filter((s) => s.length >= 4)))
  return report.healthy ? EXIT.HEALTHY : EXIT.UNHEALTHY
}

module.exports = { runDoctor, doctorMain, DoctorError, EXIT, THRESHOLDS, TIMEOUTS }
