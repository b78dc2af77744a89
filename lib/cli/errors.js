'use strict'

// The errors that end a `steadfast` command, and the exit codes they map to.

/** 1: what was asked for is not there, or was not done (e.g. a purge without --yes). */
const EXIT = Object.freeze({ OK: 0, UNDONE: 1, ERROR: 2 })

/** A malformed command line; the message names the flag and the rule. Exit code 2. */
class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * A command that cannot do what was asked. `code` is what `--json` reports (`not_found`,
 * `nothing_to_do`, `connection`, `schema`, `unsupported`, `database`, …); `exitCode` is 1 for
 * "the thing asked for is not there (or not in a state to act on)", 2 for everything else.
 */
class CliError extends Error {
  constructor(code, message, exitCode = EXIT.ERROR) {
    super(message)
    this.name = 'CliError'
    this.code = code
    this.exitCode = exitCode
  }
}

function notFound(message) {
  return new CliError('not_found', message, EXIT.UNDONE)
}

/** Map whatever a command threw to a CliError; errors from the library keep their message. */
function asCliError(e) {
  if (e instanceof CliError) return e
  if (e instanceof UsageError) return new CliError('usage', e.message)
  switch (e?.code) {
    case 'ERR_STEADFAST_NOT_FOUND':
      return notFound(e.message)
    case 'ERR_STEADFAST_UNSUPPORTED':
      return new CliError('unsupported', e.message)
    case 'ERR_STEADFAST_PROVIDER':
      return new CliError('database', e.message)
    case 'ERR_INVALID_ARG_TYPE':
    case 'ERR_INVALID_ARG_VALUE':
    case 'ERR_OUT_OF_RANGE':
    case 'ERR_STEADFAST_INVALID_ARGUMENT':
      return new CliError('usage', e.message)
    default:
      return new CliError('internal', `unexpected error: ${e?.stack ?? e}`)
  }
}

module.exports = { EXIT, UsageError, CliError, notFound, asCliError }
