'use strict'

const native = require('./native')
const { callAsync, typeError } = require('./errors')
const { postgresOptions } = require('./options')
const { requireString, requireInstance } = require('./args')
const { MAX_PATH_BYTES } = require('./option-tables')

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

  /** The schema the tables live in. */
  get schema() {
    return this._native.schema()
  }

  /** Close this provider's pool. Runtimes built on it have their own pool. */
  async close() {
    await callAsync(() => this._native.close())
  }
}

function nativeOf(provider, name) {
  return requireInstance(name, provider, Provider, 'a SqliteProvider or PostgresProvider')._native
}

module.exports = { Provider, SqliteProvider, PostgresProvider, nativeOf }
