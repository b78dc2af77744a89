'use strict'

const native = require('./native')
const { callAsync, callSync, typeError } = require('./errors')
const { postgresOptions, entraOptions } = require('./options')
const { requireString, requireInstance, integer } = require('./args')
const { tokenSource, TokenRefresh } = require('./entra')
const { checkSchema } = require('./database-url')
const { MAX_PATH_BYTES, MAX_HOST_BYTES, MAX_IDENTIFIER_BYTES } = require('./option-tables')

const CONSTRUCT = Symbol('steadfast.provider.construct')

/** Base of the two providers; holds the native handle. */
class Provider {
  constructor(token, nativeProvider) {
    if (token !== CONSTRUCT) {
      throw typeError('ERR_ILLEGAL_CONSTRUCTOR', 'use the static factories (e.g. SqliteProvider.open) to create a provider')
    }
    /** @internal */
    this._native = nativeProvider
  }

  /** `"sqlite"` or `"postgres"`. */
  get kind() {
    return this._native.kind()
  }
}

/** duroxide's bundled SQLite provider. */
class SqliteProvider extends Provider {
  static async open(path) {
    requireString('path', path, MAX_PATH_BYTES)
    return new SqliteProvider(CONSTRUCT, await callAsync(() => native.openSqlite(path)))
  }

  static async inMemory() {
    return new SqliteProvider(CONSTRUCT, await callAsync(() => native.openSqliteInMemory()))
  }
}

/** steadfast-pg: the PostgreSQL provider that cannot livelock. */
class PostgresProvider extends Provider {
  static async connect(databaseUrl) {
    return PostgresProvider.connectWithOptions({ url: databaseUrl })
  }

  static async connectWithSchema(databaseUrl, schema) {
    return PostgresProvider.connectWithOptions({ url: databaseUrl, schema })
  }

  static async connectWithOptions(options) {
    const checked = postgresOptions(options)
    return new PostgresProvider(CONSTRUCT, await callAsync(() => native.connectPostgres(checked)))
  }

  static async connectWithEntra(host, port, database, user, options) {
    return connectEntra(host, port, database, user, undefined, options)
  }

  static async connectWithSchemaAndEntra(host, port, database, user, schema, options) {
    checkSchema('schema', schema)
    return connectEntra(host, port, database, user, schema, options)
  }

  /** The schema the tables live in. */
  get schema() {
    return this._native.schema()
  }

  /** Close this provider's pool (and stop its token refresh). Runtimes built on it have their own pool. */
  async close() {
    this._refresh?.stop()
    await callAsync(() => this._native.close())
  }
}

/**
 * Azure Database for PostgreSQL with a Microsoft Entra ID token as the password (lib/entra.js):
 * the first token is fetched before connecting, then refreshed for this provider and every
 * runtime built on it until `close()`.
 */
async function connectEntra(host, port, database, user, schema, options) {
  requireString('host', host, MAX_HOST_BYTES)
  integer('port', port, 1, 65_535)
  requireString('database', database, MAX_IDENTIFIER_BYTES)
  requireString('user', user, MAX_IDENTIFIER_BYTES)
  const entra = entraOptions(options)
  const hostPart = host.includes(':') ? `[${host}]` : host
  const url = `postgres://${encodeURIComponent(user)}@${hostPart}:${port}/${encodeURIComponent(database)}?sslmode=${entra.sslMode}`
  const connect = postgresOptions({ url, schema, maxConnections: entra.maxConnections, acquireTimeoutMs: entra.acquireTimeoutMs })
  const fetchToken = tokenSource(entra)
  const first = await fetchToken()
  const nativeProvider = await callAsync(() => native.connectPostgres({ ...connect, password: first.token }))
  const provider = new PostgresProvider(CONSTRUCT, nativeProvider)
  const refresh = new TokenRefresh(
    fetchToken,
    entra.refreshIntervalMs,
    (token) => callSync(() => nativeProvider.setPassword(token)),
    (error) => process.emitWarning(`Entra token refresh failed; the last token stays in use: ${error.message}`, { code: error.code ?? 'ERR_STEADFAST_ENTRA_TOKEN' }),
  )
  refresh.start(first)
  /** @internal */
  provider._refresh = refresh
  return provider
}

function nativeOf(provider, name) {
  return requireInstance(name, provider, Provider, 'a SqliteProvider or PostgresProvider')._native
}

module.exports = { Provider, SqliteProvider, PostgresProvider, nativeOf }
