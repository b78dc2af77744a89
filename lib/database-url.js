'use strict'

// The PostgreSQL connection settings that reach SQL or the network: the database URL and the
// schema name. They mirror steadfast-pg's own checks (crates/steadfast-pg/src/database_url.rs
// and its schema name), which run again in Rust. No message ever shows the URL.

const { typeError, rangeError } = require('./errors')
const { describeValue, requireStringType } = require('./args')

const MAX_DATABASE_URL_BYTES = 4096
const DATABASE_URL_PARAMETERS = [
  'sslmode', 'ssl-mode', 'sslrootcert', 'ssl-root-cert', 'ssl-ca', 'sslcert', 'ssl-cert', 'sslkey', 'ssl-key',
  'statement-cache-capacity', 'host', 'hostaddr', 'port', 'dbname', 'user', 'password', 'application_name', 'options',
]
const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']
/** Schema names PostgreSQL owns besides pg_*. */
const RESERVED_SCHEMAS = ['information_schema']
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/

function checkDatabaseUrl(name, value) {
  requireStringType(name, value)
  const bytes = Buffer.byteLength(value)
  if (bytes === 0 || bytes > MAX_DATABASE_URL_BYTES) {
    throw rangeError(`${name} must be 1 to ${MAX_DATABASE_URL_BYTES} bytes long (got ${bytes} bytes; value not shown)`)
  }
  const control = CONTROL_CHARACTER.exec(value)
  if (control) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must not contain control characters (found one at index ${control.index}; value not shown)`)
  }
  if (/\p{Cs}/u.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be well-formed UTF-16 (it has a lone surrogate; value not shown)`)
  }
  if (!/^postgres(ql)?:\/\//.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must start with postgres:// or postgresql:// (value not shown)`)
  }
  let url
  try {
    url = new URL(value)
  } catch {
    // URL's own error carries the input; never rethrow it.
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} is not a valid URL (value not shown)`)
  }
  for (const [key, v] of url.searchParams) {
    const known = DATABASE_URL_PARAMETERS.includes(key) || /^options\[.+\]$/.test(key)
    if (!known) {
      const shown = /^[A-Za-z0-9_.\-[\]]{1,40}$/.test(key) ? `"${key}"` : '(name not shown)'
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `${name} has an unknown query parameter ${shown} (known: ${DATABASE_URL_PARAMETERS.join(', ')}, options[<setting>])`,
      )
    }
    if ((key === 'sslmode' || key === 'ssl-mode') && !SSL_MODES.includes(v)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${name} parameter ${key} must be one of ${SSL_MODES.join(', ')} (value not shown)`)
    }
  }
  return value
}

/** A schema name that is safe to quote into SQL and is not PostgreSQL's own. */
function checkSchema(name, value) {
  requireStringType(name, value)
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value) || /^pg_/i.test(value)) {
    throw typeError(
      'ERR_INVALID_ARG_VALUE',
      `${name} must be 1-63 characters of [A-Za-z0-9_], not starting with a digit or "pg_" (got ${describeValue(value)})`,
    )
  }
  if (RESERVED_SCHEMAS.includes(value.toLowerCase())) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must not be one of ${RESERVED_SCHEMAS.join(', ')} (reserved by PostgreSQL)`)
  }
  return value
}

module.exports = { MAX_DATABASE_URL_BYTES, DATABASE_URL_PARAMETERS, RESERVED_SCHEMAS, checkDatabaseUrl, checkSchema }
