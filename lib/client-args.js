'use strict'

// Argument rules of the Client methods, checked in JS before anything reaches Rust. Every
// violation throws a TypeError (wrong type, malformed value, unknown key; codes
// ERR_INVALID_ARG_TYPE / ERR_INVALID_ARG_VALUE) or a RangeError (out of range;
// ERR_OUT_OF_RANGE) whose message starts with the argument's name and states the rule.

const { typeError, rangeError } = require('./errors')
const { describeValue, requireString, MAX_NAME_BYTES } = require('./options')
const { encode, MAX_PAYLOAD_BYTES } = require('./json')

/** Longest instance id, in UTF-8 bytes (child ids are `<parent>::sub::<n>`, so keep headroom). */
const MAX_INSTANCE_ID_BYTES = 1024
/** Longest cancellation reason, in UTF-8 bytes. */
const MAX_REASON_BYTES = 64 * 1024
/** Largest timeout or interval in ms (the native layer takes a u32). */
const MAX_TIMEOUT_MS = 0xffff_ffff
/** Most instance ids in one bulk filter, and the largest `limit`. */
const MAX_BULK_INSTANCES = 10_000
/** What `listInstancesByStatus` accepts (duroxide's instance statuses). */
const INSTANCE_STATUSES = Object.freeze(['Running', 'Completed', 'Failed', 'ContinuedAsNew'])

/** A non-empty string of at most `maxBytes` UTF-8 bytes, without NUL or lone surrogates. */
function name(arg, value, maxBytes = MAX_NAME_BYTES) {
  return requireString(arg, value, maxBytes)
}

/** An instance id (see `name`). */
function instanceId(arg, value) {
  return name(arg, value, MAX_INSTANCE_ID_BYTES)
}

/**
 * The id of a new top-level instance: additionally without duroxide's reserved
 * sub-orchestration markers (a leading `sub::` or `::sub::` anywhere).
 */
function rootInstanceId(arg, value) {
  instanceId(arg, value)
  if (value.startsWith('sub::') || value.includes('::sub::')) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${arg} must not use the reserved sub-orchestration marker "sub::" (got ${describeValue(value)})`)
  }
  return value
}

/** A string that may be empty (e.g. a cancellation reason); otherwise as `name`. */
function text(arg, value, maxBytes) {
  if (typeof value !== 'string') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a string (got ${describeValue(value)})`)
  }
  return value.length === 0 ? value : requireString(arg, value, maxBytes)
}

function boolean(arg, value) {
  if (typeof value !== 'boolean') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a boolean (got ${describeValue(value)})`)
  }
  return value
}

/** An integer number in [min, max]. */
function integer(arg, value, min, max) {
  if (typeof value !== 'number') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a number (got ${describeValue(value)})`)
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw rangeError(`${arg} must be an integer between ${min} and ${max} (got ${describeValue(value)})`)
  }
  return value
}

/** A timeout in ms: 0 to 2^32 - 1. */
function timeoutMs(arg, value) {
  return integer(arg, value, 0, MAX_TIMEOUT_MS)
}

/** A poll interval in ms: 1 to 2^32 - 1 (0 would poll the store in a busy loop). */
function intervalMs(arg, value) {
  return integer(arg, value, 1, MAX_TIMEOUT_MS)
}

/** A time or counter that must survive the trip through a JS number: 0 to 2^53 - 1. */
function safeCount(arg, value, min = 0) {
  return integer(arg, value, min, Number.MAX_SAFE_INTEGER)
}

function oneOf(arg, value, values) {
  if (typeof value !== 'string') {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a string (got ${describeValue(value)})`)
  }
  if (!values.includes(value)) {
    const list = values.map((v) => JSON.stringify(v)).join(', ')
    throw typeError('ERR_INVALID_ARG_VALUE', `${arg} must be one of ${list} (got ${describeValue(value)})`)
  }
  return value
}

/**
 * JSON text of an input or payload; `undefined` becomes `null` (as in duroxide-node). Values
 * JSON cannot carry (BigInt, functions, symbols, NaN, ±Infinity, cycles, lone surrogates) are
 * rejected wherever they are instead of being dropped or turned into null (see json.js).
 */
function json(arg, value) {
  return encode(value, arg)
}

/** A plain options object whose keys are all in `known`; `undefined` values count as absent. */
function fields(arg, value, known) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be an object (got ${describeValue(value)})`)
  }
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${arg}.${key} is not a known option (known: ${known.join(', ')})`)
    }
  }
  return (key) => value[key]
}

/** `{ instanceIds?, completedBefore?, limit? }` → the native filter. */
function instanceFilter(arg, value) {
  const get = fields(arg, value, ['instanceIds', 'completedBefore', 'limit'])
  const out = {}
  const ids = get('instanceIds')
  if (ids !== undefined) {
    if (!Array.isArray(ids)) {
      throw typeError('ERR_INVALID_ARG_TYPE', `${arg}.instanceIds must be an array of instance ids (got ${describeValue(ids)})`)
    }
    if (ids.length > MAX_BULK_INSTANCES) {
      throw rangeError(`${arg}.instanceIds must hold at most ${MAX_BULK_INSTANCES} ids (got ${ids.length})`)
    }
    out.instanceIds = ids.map((id, i) => instanceId(`${arg}.instanceIds[${i}]`, id))
  }
  const before = get('completedBefore')
  if (before !== undefined) out.completedBefore = safeCount(`${arg}.completedBefore`, before)
  const limit = get('limit')
  if (limit !== undefined) out.limit = integer(`${arg}.limit`, limit, 1, MAX_BULK_INSTANCES)
  return out
}

/** `{ signal? }` of a wait: the AbortSignal, or undefined. */
function waitOptions(arg, value) {
  if (value === undefined) return undefined
  const signal = fields(arg, value, ['signal'])('signal')
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${arg}.signal must be an AbortSignal (got ${describeValue(signal)})`)
  }
  return signal
}

/** `{ keepLast?, completedBefore? }` → the native prune options. */
function pruneOptions(arg, value) {
  const get = fields(arg, value, ['keepLast', 'completedBefore'])
  const out = {}
  const keep = get('keepLast')
  if (keep !== undefined) out.keepLast = integer(`${arg}.keepLast`, keep, 0, MAX_TIMEOUT_MS)
  const before = get('completedBefore')
  if (before !== undefined) out.completedBefore = safeCount(`${arg}.completedBefore`, before)
  return out
}

module.exports = {
  MAX_INSTANCE_ID_BYTES,
  MAX_NAME_BYTES,
  MAX_REASON_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_TIMEOUT_MS,
  MAX_BULK_INSTANCES,
  INSTANCE_STATUSES,
  name,
  instanceId,
  rootInstanceId,
  text,
  boolean,
  integer,
  timeoutMs,
  intervalMs,
  safeCount,
  oneOf,
  json,
  fields,
  instanceFilter,
  pruneOptions,
  waitOptions,
}
