'use strict'

// initTracing: route the process's tracing output (duroxide's orchestration and activity
// traces, steadfast-pg's diagnostics) to a file. Options are checked here first; the
// native half is src/tracing_init.rs.

const native = require('./native')
const { callSync } = require('./errors')
const { applyTable } = require('./options')
const { TRACING_FIELDS } = require('./option-tables')

/**
 * Install a process-wide subscriber that appends to `options.logFile`. Call once, before the
 * first `Runtime.start()` (which otherwise installs duroxide's stdout subscriber).
 */
function initTracing(options) {
  const checked = { ...applyTable('options', options, TRACING_FIELDS) }
  callSync(() => native.initTracing(checked))
}

module.exports = { initTracing }
