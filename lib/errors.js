'use strict'

// The JS half of the error seam (the Rust half is src/errors.rs). Native errors carry their
// stable code as a `[ERR_STEADFAST_…] ` message prefix; here it becomes `err.code`.

const CODE_PREFIX = /^\[(ERR_STEADFAST_[A-Z_]+)\] /

/** An error raised by steadfast's native layer; `code` is stable across releases. */
class SteadfastError extends Error {
  constructor(code, message, options) {
    super(message, options)
    this.name = 'SteadfastError'
    this.code = code
  }
}

/** Turn whatever the native layer threw into a SteadfastError (other errors pass through). */
function translate(err) {
  if (err instanceof SteadfastError) return err
  const message = err && typeof err.message === 'string' ? err.message : String(err)
  const m = CODE_PREFIX.exec(message)
  if (!m) return err
  return new SteadfastError(m[1], message.slice(m[0].length))
}

/** Run a synchronous native call, translating its error. */
function callSync(fn) {
  try {
    return fn()
  } catch (e) {
    throw translate(e)
  }
}

/** Await a native promise, translating its rejection. */
async function callAsync(fn) {
  try {
    return await fn()
  } catch (e) {
    throw translate(e)
  }
}

function typeError(code, message) {
  const e = new TypeError(message)
  e.code = code
  return e
}

function rangeError(message) {
  const e = new RangeError(message)
  e.code = 'ERR_OUT_OF_RANGE'
  return e
}

/** Message text for a thrown value (anything can be thrown in JS). */
function describe(value) {
  if (value instanceof Error) return value.message
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

module.exports = { SteadfastError, translate, callSync, callAsync, typeError, rangeError, describe }
