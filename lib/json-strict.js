'use strict'

// The reference payload encoder: every rule with its message and the path of the offending
// value. encode() in json.js runs a cheaper check first and comes here only to name a problem.

const { types } = require('node:util')
const { typeError, rangeError, describe } = require('./errors')
const { LONE_SURROGATE } = require('./text')

/** Largest payload (input, event data, result, output, custom status, value), as UTF-8 JSON text. */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
/**
 * Deepest nesting of arrays/objects. The native layer parses results with serde_json, whose
 * recursion limit (128) would otherwise turn a deeper value silently into a string.
 */
const MAX_PAYLOAD_DEPTH = 100
/** Thrown from the replacer so the catch below can tell it from JSON.stringify's own errors. */
class PayloadError extends Error {}
class PayloadDepthError extends Error {}

/**
 * The primitive JSON.stringify reads out of a boxed Number, String, Boolean or BigInt after the
 * replacer has run (ToNumber, ToString, or the held value), and a Symbol object's symbol (JSON
 * would write it as `{}`); any other value unchanged. Both replacers check this primitive and
 * return it, so `new Number(NaN)` is refused like NaN and not written as `null`.
 */
function unboxed(value) {
  if (typeof value !== 'object' || value === null || !types.isBoxedPrimitive(value)) return value
  if (types.isNumberObject(value)) return Number(value)
  if (types.isStringObject(value)) return String(value)
  if (types.isBooleanObject(value)) return Boolean.prototype.valueOf.call(value)
  if (types.isBigIntObject(value)) return BigInt.prototype.valueOf.call(value)
  return Symbol.prototype.valueOf.call(value)
}

function pathOf(parentPath, key) {
  if (key === '') return parentPath
  return /^\d+$/.test(key) ? `${parentPath}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${parentPath}.${key}` : `${parentPath}[${JSON.stringify(key)}]`
}

/**
 * A JSON.stringify replacer refusing what JSON would silently drop or corrupt: BigInt,
 * functions, symbols, NaN and ±Infinity (JSON writes null), lone surrogates in strings or
 * keys, nesting deeper than MAX_PAYLOAD_DEPTH; boxed primitives by the rule of the primitive
 * they hold. `undefined` inside objects is dropped as JSON does. Paths and depths are tracked
 * per holder.
 */
function strictReplacer(what) {
  const holders = new WeakMap()
  return function replacer(key, held) {
    const value = unboxed(held)
    const parent = holders.get(this) ?? { path: what, depth: 0 }
    const path = pathOf(parent.path, key)
    if (LONE_SURROGATE.test(key)) throw new PayloadError(`${path}: a key is not well-formed UTF-16 (lone surrogate)`)
    switch (typeof value) {
      case 'bigint':
        throw new PayloadError(`${path} is a BigInt (convert it to a string or number)`)
      case 'function':
        throw new PayloadError(`${path} is a function`)
      case 'symbol':
        throw new PayloadError(`${path} is a symbol`)
      case 'number':
        if (!Number.isFinite(value)) throw new PayloadError(`${path} is ${value} (JSON has no NaN or Infinity)`)
        return value
      case 'string':
        if (LONE_SURROGATE.test(value)) throw new PayloadError(`${path} is not well-formed UTF-16 (lone surrogate at index ${LONE_SURROGATE.exec(value).index})`)
        return value
      case 'object':
        if (value !== null) {
          if (parent.depth + 1 > MAX_PAYLOAD_DEPTH) throw new PayloadDepthError(`${what} must be nested at most ${MAX_PAYLOAD_DEPTH} levels deep (${path} is deeper)`)
          holders.set(value, { path, depth: parent.depth + 1 })
        }
        return value
      default:
        return value
    }
  }
}

/**
 * JSON text for a value crossing into Rust; `undefined` becomes `null`. Throws a TypeError
 * (ERR_INVALID_ARG_VALUE) naming `what` and the path for a value JSON cannot carry, and a
 * RangeError (ERR_OUT_OF_RANGE) when the text exceeds MAX_PAYLOAD_BYTES.
 */
function encodeStrict(value, what) {
  let text
  try {
    text = JSON.stringify(value === undefined ? null : value, strictReplacer(what))
  } catch (e) {
    if (e instanceof PayloadDepthError) throw rangeError(e.message)
    if (e instanceof PayloadError) throw typeError('ERR_INVALID_ARG_VALUE', `${what} must be JSON-serializable: ${e.message}`)
    const message = describe(e)
    if (/circular/i.test(message)) throw typeError('ERR_INVALID_ARG_VALUE', `${what} must be JSON-serializable: it contains a circular reference`)
    if (e instanceof RangeError && /string length/i.test(message)) {
      throw rangeError(`${what} must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON (it is larger than a string can hold)`)
    }
    throw typeError('ERR_INVALID_ARG_VALUE', `${what} could not be serialized: ${message}`)
  }
  if (text === undefined) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${what} must be JSON-serializable (got ${typeof value})`)
  }
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw rangeError(`${what} must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON (got ${bytes})`)
  }
  return text
}

module.exports = { encodeStrict, unboxed, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH }
