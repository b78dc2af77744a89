'use strict'

// Query parameters of the console's API, named as the `steadfast` command's flags (`limit`
// for --limit): checked here for unknown, repeated and empty ones, then parsed by the
// command's own rules, whose messages are reworded to name the parameter.

const { HttpError } = require('./http')

function badRequest(message) {
  return new HttpError(400, 'bad_request', message)
}

/**
 * `searchParams` as a command's parsed values, keyed by flag name. Only `allowed` names are
 * accepted, each once and not empty.
 */
function queryValues(searchParams, allowed) {
  const values = {}
  for (const [name, value] of searchParams) {
    if (!allowed.includes(name)) {
      const shown = /^[A-Za-z0-9_.-]{1,40}$/.test(name) ? name : JSON.stringify(name.slice(0, 40))
      const known = allowed.length === 0 ? 'this path takes none' : `known: ${allowed.join(', ')}`
      throw badRequest(`unknown query parameter ${shown} (${known})`)
    }
    if (Object.hasOwn(values, name)) throw badRequest(`query parameter ${name} given more than once`)
    if (value === '') throw badRequest(`query parameter ${name} must not be empty (leave it out instead)`)
    values[name] = value
  }
  return values
}

/**
 * A command's usage message about a query parameter: `--limit must be …` → `query parameter
 * limit must be …`; the library's `options.orchestrationName` → the parameter it came from.
 */
function parameterMessage(message, libraryNames = {}) {
  return message
    .replace(/ \(see --help\)/g, '')
    .replace(/--([a-z][a-z-]*)/g, 'query parameter $1')
    .replace(/options\.(\w+)/g, (m, field) => (Object.hasOwn(libraryNames, field) ? `query parameter ${libraryNames[field]}` : m))
}

/** An integer path segment in 1 .. 2^53 - 1, or a 400 naming `what`. */
function pathInteger(segment, what) {
  const n = /^[1-9][0-9]{0,15}$/.test(segment) ? Number(segment) : NaN
  if (!Number.isSafeInteger(n)) throw badRequest(`${what} in the path must be an integer between 1 and ${Number.MAX_SAFE_INTEGER}`)
  return segment
}

/** A percent-encoded path segment, decoded, or a 400 naming `what`. */
function pathText(segment, what) {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw badRequest(`${what} in the path is not valid percent-encoding`)
  }
}

module.exports = { badRequest, queryValues, parameterMessage, pathInteger, pathText }
