'use strict'

// The store a command works on, opened through the library's own providers and Client.
// PostgreSQL is opened with runMigrations: false: a command line never changes the version of
// a schema that applications run on, so a missing or differently-versioned schema is refused.

const fs = require('node:fs')
const { UsageError, CliError } = require('./errors')
const { inspectUrl, urlSecrets } = require('./url')

const POSTGRES_URL = /^postgres(ql)?:\/\//i
const SQLITE_URL = /^sqlite:/i

/** Pool options of the command's provider: one command, a few statements at a time. */
const POOL = Object.freeze({ maxConnections: 2, acquireTimeoutMs: 10_000 })

/** What steadfast-pg says when a schema is not at this build's version (crates/steadfast-pg/src/migrate.rs). */
const SCHEMA_REFUSAL = /run_migrations is false|newer than this build supports|pre-release build|was changed after it was applied/

/**
 * `--url` → `{ kind: 'postgres', url, display, secrets }` or `{ kind: 'sqlite', path, display,
 * secrets: [] }`. `sqlite:PATH` (also `sqlite://PATH`) names an existing SQLite file.
 */
function parseStoreUrl(raw) {
  if (SQLITE_URL.test(raw)) {
    const path = raw.replace(SQLITE_URL, '').replace(/^\/\//, '')
    if (path === '') throw new UsageError('--url sqlite: needs a file path, e.g. sqlite:./store.db')
    return { kind: 'sqlite', path, display: `sqlite:${path}`, secrets: [] }
  }
  if (!POSTGRES_URL.test(raw)) {
    const err = new UsageError('--url must start with postgres://, postgresql:// or sqlite:')
    err.secrets = urlSecrets(raw)
    throw err
  }
  return { kind: 'postgres', ...inspectUrl(raw) }
}

/** A provider's refusal as the CLI reports it; anything unrecognised is passed on. */
function openError(e, target, schema) {
  if ((e instanceof TypeError || e instanceof RangeError) && /^options\.\w+ /.test(e.message)) {
    // The provider's own option rules (lib/options.js) name the field as options.<name>.
    return new UsageError(e.message.replace(/^options\./, '--'))
  }
  if (e?.code !== 'ERR_STEADFAST_PROVIDER_OPEN') return e
  if (target.kind === 'postgres' && SCHEMA_REFUSAL.test(e.message)) {
    return new CliError(
      'schema',
      `schema "${schema}" cannot be used as it is: ${e.message}. The command line never creates or migrates a schema: check --schema, or start this version's runtime on it first`,
    )
  }
  return new CliError('connection', `cannot open ${target.display}: ${e.message}`)
}

/** Every transaction of a session opened with this URL parameter is read-only unless it says otherwise. */
const READ_ONLY_PARAMETER = 'options=-c%20default_transaction_read_only%3Don'

/** `url` with READ_ONLY_PARAMETER added (before a fragment, after any query parameters). */
function readOnlyUrl(url) {
  const hash = url.indexOf('#')
  const [base, fragment] = hash < 0 ? [url, ''] : [url.slice(0, hash), url.slice(hash)]
  return `${base}${base.includes('?') ? '&' : '?'}${READ_ONLY_PARAMETER}${fragment}`
}

/**
 * Open the store `target` (from parseStoreUrl). Resolves `{ client, kind, close() }`; rejects
 * with a CliError (exit code 2) when the store cannot be opened as it is. `readOnly` makes
 * PostgreSQL refuse every write of this store's sessions; `maxConnections` sizes its pool.
 */
async function openStore(target, schema, { readOnly = false, maxConnections = POOL.maxConnections } = {}) {
  // Required here, not at the top: `--help` and usage errors need no native addon.
  const { PostgresProvider, SqliteProvider } = require('../providers')
  const { Client } = require('../client')
  let provider
  try {
    if (target.kind === 'sqlite') {
      // SqliteProvider.open would create a missing file; a command only reads existing stores.
      if (!fs.statSync(target.path, { throwIfNoEntry: false })?.isFile()) {
        throw new CliError('connection', `there is no SQLite file at ${target.path}`)
      }
      provider = await SqliteProvider.open(target.path)
    } else {
      const url = readOnly ? readOnlyUrl(target.url) : target.url
      provider = await PostgresProvider.connectWithOptions({ url, schema, runMigrations: false, ...POOL, maxConnections })
    }
  } catch (e) {
    throw openError(e, target, schema)
  }
  return {
    client: new Client(provider),
    kind: target.kind,
    close: async () => {
      if (target.kind === 'postgres') await provider.close()
    },
  }
}

module.exports = { parseStoreUrl, openStore, readOnlyUrl }
