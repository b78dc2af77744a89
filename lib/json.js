'use strict'

const { encodeStrict, unboxed, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } = require('./json-strict')

/** Thrown by the checking replacer: the value breaks a rule, and encodeStrict will say which. */
const SUSPECT = Object.freeze({ suspect: true })

/**
 * A replacer refusing exactly what encodeStrict's replacer refuses (lone surrogates in keys
 * or strings, non-finite numbers, BigInt, functions, symbols, nesting deeper than
 * MAX_PAYLOAD_DEPTH, boxed primitives by the rule of the primitive they hold), without building
 * paths or messages. JSON.stringify walks depth-first and passes the holder as `this`, so the
 * objects still open above the current value are `ancestors` up to `this`: its length is the
 * holder's depth, with no per-object map.
 */
function checkingReplacer() {
  const ancestors = []
  return function check(key, held) {
    const value = unboxed(held)
    while (ancestors.length !== 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop()
    if (!key.isWellFormed()) throw SUSPECT
    switch (typeof value) {
      case 'string':
        if (!value.isWellFormed()) throw SUSPECT
        return value
      case 'number':
        if (!Number.isFinite(value)) throw SUSPECT
        return value
      case 'object':
        if (value !== null) {
          if (ancestors.length >= MAX_PAYLOAD_DEPTH) throw SUSPECT
          ancestors.push(value)
        }
        return value
      case 'boolean':
      case 'undefined':
        return value
      default:
        throw SUSPECT
    }
  }
}

/** True when `text` may exceed MAX_PAYLOAD_BYTES; a UTF-16 unit is at most 3 UTF-8 bytes. */
function mayBeTooLarge(text) {
  return text.length > MAX_PAYLOAD_BYTES / 3 && Buffer.byteLength(text) > MAX_PAYLOAD_BYTES
}

/**
 * JSON text for a value crossing into Rust, by the rules of encodeStrict (json-strict.js),
 * with the same text and the same errors. Both replacers return every value unchanged (a boxed
 * primitive as the primitive JSON.stringify would read out of it), so when the check passes the
 * text is encodeStrict's. Anything else (a rule broken, a cycle,
 * a throwing getter or toJSON, the size limit) goes to encodeStrict for its exact error;
 * only then do getters and toJSON run a second time.
 */
function encode(value, what) {
  let text
  try {
    text = JSON.stringify(value === undefined ? null : value, checkingReplacer())
  } catch {
    return encodeStrict(value, what)
  }
  if (text === undefined || mayBeTooLarge(text)) return encodeStrict(value, what)
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

module.exports = { encode, encodeStrict, decode, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH }
