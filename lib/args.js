'use strict'

// The argument primitives: every check of a value a user hands in is built from these, so each
// rule has one wording and one error class. Wrong type, malformed value or unknown key: a
// TypeError (ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE); out of range: a RangeError
// (ERR_OUT_OF_RANGE). Every message starts with the argument's (dotted) name and states the rule.

const { typeError, rangeError, describe } = require('./errors')
const { checkText } = require('./text')

/** Identifiers (instance ids, names, keys): PostgreSQL indexes them, so keep them short. */
const MAX_NAME_BYTES = 1024

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

/** A value as error messages show it: type and a short preview, never a whole long string. */
function describeValue(v) {
  if (v === null) return 'null'
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : `number ${v}`
  try {
    if (Array.isArray(v)) return 'an array'
  } catch {
    return 'a revoked Proxy'
  }
  return typeof v
}

function checkNumber(name, value, min, max, whole) {
  if (typeof value !== 'number') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a number (got ${describeValue(value)})`)
  }
  if (!Number.isFinite(value)) throw rangeError(`${name} must be a finite number (got ${describeValue(value)})`)
  if (whole && !Number.isInteger(value)) throw rangeError(`${name} must be an integer (got ${value})`)
  if (value < min || value > max) throw rangeError(`${name} must be between ${min} and ${max} (got ${value})`)
  return value
}

/** A whole number in [min, max]. */
function integer(name, value, min, max) {
  return checkNumber(name, value, min, max, true)
}

/** A finite number in [min, max]. */
function number(name, value, min, max) {
  return checkNumber(name, value, min, max, false)
}

function requireStringType(name, value) {
  if (typeof value !== 'string') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a string (got ${describeValue(value)})`)
  }
  return value
}

/** At most `maxBytes` of UTF-8, no NUL (PostgreSQL text), no lone surrogate (napi would mangle it). */
function checkedText(name, value, maxBytes) {
  const problem = checkText(value, maxBytes)
  if (!problem) return value
  throw problem.kind === 'size' ? rangeError(`${name} ${problem.rule}`) : typeError('ERR_INVALID_ARG_VALUE', `${name} ${problem.rule}`)
}

/** A non-empty string for Rust and PostgreSQL: at most `maxBytes` UTF-8 bytes, no NUL, no lone surrogate. */
function requireString(name, value, maxBytes = MAX_NAME_BYTES) {
  if (typeof value !== 'string' || value.length === 0) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a non-empty string (got ${describeValue(value)})`)
  }
  return checkedText(name, value, maxBytes)
}

/** As `requireString`, but the empty string is allowed (a reason, a stored value). */
function requireText(name, value, maxBytes) {
  return checkedText(name, requireStringType(name, value), maxBytes)
}

function requireBoolean(name, value) {
  if (typeof value !== 'boolean') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a boolean (got ${describeValue(value)})`)
  }
  return value
}

function oneOf(name, value, values) {
  if (!values.includes(value)) {
    const list = values.map((v) => JSON.stringify(v)).join(', ')
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be one of ${list} (got ${describeValue(value)})`)
  }
  return value
}

function requireSemver(name, value) {
  requireString(name, value)
  if (!SEMVER.test(value)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must be a semantic version like "1.2.0" (got ${JSON.stringify(value)})`)
  }
  return value
}

function requireFunction(name, value) {
  if (typeof value !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a function (got ${describeValue(value)})`)
  return value
}

/** `value instanceof Class`; `what` names it in the message, e.g. "an AbortSignal". */
function requireInstance(name, value, Class, what) {
  if (!(value instanceof Class)) throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be ${what} (got ${describeValue(value)})`)
  return value
}

const GeneratorFunction = Object.getPrototypeOf(function* () {}).constructor

/** A `function*`: what an orchestration is. */
function requireGeneratorFunction(name, value) {
  return requireInstance(name, value, GeneratorFunction, 'a generator function*')
}

/**
 * An array of `min` to `max` entries (`noun` names them), copied once: a Proxy or a
 * getter-backed array could change between the check and the use.
 */
function requireArray(name, value, min, max, noun) {
  let copy
  try {
    if (Array.isArray(value)) copy = Array.from(value)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} could not be read: ${describe(e)}`)
  }
  if (!copy) throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be an array of ${noun} (got ${describeValue(value)})`)
  if (copy.length < min || copy.length > max) throw rangeError(`${name} must hold ${min} to ${max} ${noun} (got ${copy.length})`)
  return copy
}

function levenshtein(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = cur
    }
  }
  return row[b.length]
}

/** The known key closest to `key`, if it is plausibly a typo. */
function closest(key, known) {
  let best
  let bestDistance = Infinity
  for (const k of known) {
    const d = levenshtein(key.toLowerCase(), k.toLowerCase())
    if (d < bestDistance) {
      best = k
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined
}

/** Objects whose prototype is a root (Object.prototype of any realm) or null. */
function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}

function requirePlainObject(name, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be an object (got ${describeValue(value)})`)
  }
  let plain
  try {
    plain = isPlainObject(value)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} could not be read: ${describe(e)}`)
  }
  if (!plain) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${name} must be a plain object like { ... } (got an instance of a class)`)
  }
}

/**
 * Read an options object once: its own enumerable string keys (each must be a key of `known`)
 * and their values, into a null-prototype copy. Getters run once, so what is checked is what
 * is used; inherited (e.g. polluted Object.prototype) properties are never read.
 */
function readOptions(name, value, known) {
  requirePlainObject(name, value)
  let keys
  try {
    keys = Object.keys(value)
  } catch (e) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} could not be read: ${describe(e)}`)
  }
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(known, key)) {
      const hint = closest(key, Object.keys(known))
      throw typeError('ERR_INVALID_ARG_VALUE', `${name}.${key} is not a known option${hint ? ` (did you mean "${hint}"?)` : ''}`)
    }
  }
  const out = Object.create(null)
  for (const key of keys) {
    try {
      out[key] = value[key]
    } catch (e) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${name}.${key} could not be read (its getter threw: ${describe(e)})`)
    }
  }
  return out
}

module.exports = {
  MAX_NAME_BYTES,
  describeValue,
  integer,
  number,
  requireStringType,
  requireString,
  requireText,
  requireBoolean,
  oneOf,
  requireSemver,
  requireFunction,
  requireInstance,
  requireGeneratorFunction,
  requireArray,
  readOptions,
}
