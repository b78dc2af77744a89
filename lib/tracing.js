'use strict'

// initTracing: route the process's tracing output (duroxide's orchestration and activity
// traces, steadfast-pg's diagnostics) to a file. Options are checked here first; the
// native half is src/tracing_init.rs.

const native = require('./native')
const { callSync } = require('./errors')
const args = require('./client-args')

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace', 'off']
const LOG_FORMATS = ['json', 'pretty', 'compact']
/** Longest log file path, in UTF-8 bytes (Linux PATH_MAX). */
const MAX_PATH_BYTES = 4096

/**
 * Install a process-wide subscriber that appends to `options.logFile`. Call once, before the
 * first `Runtime.start()` (which otherwise installs duroxide's stdout subscriber).
 */
function initTracing(options) {
  const get = args.fields('options', options, ['logFile', 'logLevel', 'logFormat'])
  const out = { logFile: args.name('options.logFile', get('logFile'), MAX_PATH_BYTES) }
  if (get('logLevel') !== undefined) out.logLevel = args.oneOf('options.logLevel', get('logLevel'), LOG_LEVELS)
  if (get('logFormat') !== undefined) out.logFormat = args.oneOf('options.logFormat', get('logFormat'), LOG_FORMATS)
  callSync(() => native.initTracing(out))
}

module.exports = { initTracing }
