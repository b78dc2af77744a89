'use strict'

const { typeError } = require('./errors')

/** JSON text for a value crossing into Rust; `undefined` becomes `null`. */
function encode(value, what) {
  const text = JSON.stringify(value === undefined ? null : value)
  if (text === undefined) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${what} must be JSON-serializable (got ${typeof value})`)
  }
  return text
}

/** Parse JSON text from Rust; empty means `undefined`, non-JSON stays a string. */
function decode(text) {
  if (text === undefined || text === null || text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

module.exports = { encode, decode }
