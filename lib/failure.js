'use strict'

// An activity's thrown error crosses duroxide as text (an activity fails with a string). To
// reach the orchestration with its shape, the text is the message as before, then a trailer
// line holding the rest as JSON: name, code, stack and the error's own enumerable fields.
// The orchestration side rebuilds the error from it, the same way on every replay (it reads
// history). Plain text (no trailer: timeouts, poison, sub-orchestration failures, anything
// thrown that is not an Error) stays a plain Error with that text as its message.

const { sanitizeMessage } = require('./text')
const { describe } = require('./errors')

/**
 * Thrown by an activity: a retry policy (`scheduleActivityWithRetry`) stops at once and the
 * orchestration's `yield` throws it. Any error with an own `nonRetryable: true` counts too.
 * src/retry.rs reads the mark from the trailer (`nonRetryable` in the shape).
 */
class NonRetryableError extends Error {
  constructor(message, options) {
    super(message, options)
    this.name = 'NonRetryableError'
  }
}

const TRAILER = '\n[steadfast:error] '
/** Caps on what the trailer carries (history holds it): a stack, and the fields as JSON. */
const MAX_STACK_CHARS = 8 * 1024
const MAX_FIELDS_CHARS = 16 * 1024
/** Error classes rebuilt as themselves; any other name becomes an Error with that name. */
const BUILT_IN = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, NonRetryableError }
const OWN_SHAPE = new Set(['message', 'stack', 'name', 'code', 'cause'])

function ownFields(err) {
  const fields = {}
  let any = false
  for (const key of Object.keys(err)) {
    if (OWN_SHAPE.has(key)) continue
    fields[key] = err[key]
    any = true
  }
  if (!any) return undefined
  try {
    const text = JSON.stringify(fields)
    return text !== undefined && text.length <= MAX_FIELDS_CHARS ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

/** The failure text of a value an activity threw. */
function failureOf(thrown) {
  const message = sanitizeMessage(describe(thrown))
  if (!(thrown instanceof Error)) return message
  const shape = { name: String(thrown.name) }
  if (typeof thrown.code === 'string' || typeof thrown.code === 'number') shape.code = thrown.code
  if (thrown instanceof NonRetryableError || thrown.nonRetryable === true) shape.nonRetryable = true
  const fields = ownFields(thrown)
  if (fields) shape.fields = fields
  if (typeof thrown.stack === 'string') shape.stack = thrown.stack.slice(0, MAX_STACK_CHARS)
  return message + TRAILER + sanitizeMessage(JSON.stringify(shape))
}

function parse(text) {
  const at = typeof text === 'string' ? text.lastIndexOf(TRAILER) : -1
  if (at < 0) return null
  try {
    const shape = JSON.parse(text.slice(at + TRAILER.length))
    return shape && typeof shape.name === 'string' ? { message: text.slice(0, at), shape } : null
  } catch {
    return null
  }
}

/** The error a failure text stands for, as the orchestration's `yield` throws it. */
function errorOf(text) {
  const parsed = parse(text)
  if (!parsed) return new Error(text)
  const { message, shape } = parsed
  const Class = Object.hasOwn(BUILT_IN, shape.name) ? BUILT_IN[shape.name] : Error
  const err = new Class(message)
  // Defined, not assigned: a field named __proto__ must stay a field, not replace the prototype.
  for (const [key, value] of Object.entries(shape.fields ?? {})) {
    Object.defineProperty(err, key, { value, writable: true, enumerable: true, configurable: true })
  }
  if (Class === Error && shape.name !== 'Error') err.name = shape.name
  if (shape.code !== undefined) err.code = shape.code
  if (typeof shape.stack === 'string') err.stack = shape.stack
  return err
}

/** A failure text without its trailer: the message alone (`all` results carry text). */
function messageOf(text) {
  return parse(text)?.message ?? text
}

module.exports = { NonRetryableError, failureOf, errorOf, messageOf }
