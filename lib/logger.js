'use strict'

// The `logger` runtime option: records from Rust's tracing (duroxide's orchestration, activity
// and runtime logs, steadfast-pg's diagnostics) handed to an application logger, pino-style:
// `logger[level]({ target, ...fields }, message)`.

const { typeError } = require('./errors')
const args = require('./args')

const METHODS = ['debug', 'info', 'warn', 'error']

/** The option's rule: an object with the four methods. */
function requireLogger(name, value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be an object with ${METHODS.join(', ')} methods (got ${args.describeValue(value)})`)
  }
  const missing = METHODS.filter((m) => typeof value[m] !== 'function')
  if (missing.length > 0) throw typeError('ERR_INVALID_ARG_TYPE', `${name} must have ${METHODS.join(', ')} methods (missing ${missing.join(', ')})`)
  return value
}

/**
 * The native callback for `logger`: one record as JSON text. tracing's `trace` goes to
 * `logger.trace` when there is one, else `debug`. A logger that throws loses that record
 * only: nothing of it reaches the runtime.
 */
function forwardTo(logger) {
  return (json) => {
    try {
      const { level, target, message, fields } = JSON.parse(json)
      const method = level === 'trace' && typeof logger.trace !== 'function' ? 'debug' : level
      logger[method]({ target, ...fields }, message)
    } catch {}
  }
}

module.exports = { requireLogger, forwardTo }
