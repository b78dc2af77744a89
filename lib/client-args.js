'use strict'

// Argument rules of the Client methods, built from the primitives of lib/args.js and the
// option tables; docs/node-api.md ("Argument rules") states them.

const args = require('./args')
const { encode } = require('./json')
const { checkRootInstanceId } = require('./limits')
const { applyTable, applyOptionalTable } = require('./options')
const { orchestrationTarget } = require('./refs')
const { MAX_INSTANCE_ID_BYTES, MAX_TIMEOUT_MS, INSTANCE_FILTER_FIELDS, PRUNE_FIELDS, WAIT_FIELDS, ORCHESTRATION_WAIT_FIELDS } = require('./option-tables')

/** Longest cancellation reason, in UTF-8 bytes. */
const MAX_REASON_BYTES = 64 * 1024
/** What `listInstancesByStatus` accepts (duroxide's instance statuses). */
const INSTANCE_STATUSES = Object.freeze(['Running', 'Completed', 'Failed', 'ContinuedAsNew'])

/** An orchestration, event, queue or key name. */
function name(arg, value) {
  return args.requireString(arg, value)
}

/** An orchestration's name or defineOrchestration*() reference, as `{ name, version? }`. */
function orchestration(arg, value) {
  return orchestrationTarget(arg, value)
}

function instanceId(arg, value) {
  return args.requireString(arg, value, MAX_INSTANCE_ID_BYTES)
}

/** The id of a new top-level instance: without duroxide's reserved sub-orchestration markers. */
function rootInstanceId(arg, value) {
  return checkRootInstanceId(arg, instanceId(arg, value))
}

function reason(arg, value) {
  return args.requireText(arg, value, MAX_REASON_BYTES)
}

/** A timeout in ms: 0 to 2^32 - 1. */
function timeoutMs(arg, value) {
  return args.integer(arg, value, 0, MAX_TIMEOUT_MS)
}

/** A poll interval in ms: 1 to 2^32 - 1 (0 would poll the store in a busy loop). */
function intervalMs(arg, value) {
  return args.integer(arg, value, 1, MAX_TIMEOUT_MS)
}

/** A time or counter that must survive the trip through a JS number: `min` to 2^53 - 1. */
function safeCount(arg, value, min = 0) {
  return args.integer(arg, value, min, Number.MAX_SAFE_INTEGER)
}

/** A dead letter's store id: positive, and exact as a JS number. */
function deadLetterId(arg, value) {
  return safeCount(arg, value, 1)
}

/**
 * JSON text of an input or payload; `undefined` becomes `null` (as in duroxide-node). Values
 * JSON cannot carry (BigInt, functions, symbols, NaN, ±Infinity, cycles, lone surrogates) are
 * rejected wherever they are instead of being dropped or turned into null (see json.js).
 */
function json(arg, value) {
  return encode(value, arg)
}

/** `{ instanceIds?, completedBefore?, limit? }` → the native filter. */
function instanceFilter(arg, value) {
  return { ...applyTable(arg, value, INSTANCE_FILTER_FIELDS) }
}

/** `{ keepLast?, completedBefore? }` → the native prune options. */
function pruneOptions(arg, value) {
  return { ...applyTable(arg, value, PRUNE_FIELDS) }
}

/** `{ signal? }` of a wait: the AbortSignal, or undefined. */
function waitOptions(arg, value) {
  return applyOptionalTable(arg, value, WAIT_FIELDS).signal
}

/** `{ signal?, orchestration? }` of an orchestration wait. */
function orchestrationWaitOptions(arg, value) {
  return applyOptionalTable(arg, value, ORCHESTRATION_WAIT_FIELDS)
}

module.exports = {
  INSTANCE_STATUSES,
  name,
  orchestration,
  instanceId,
  rootInstanceId,
  reason,
  timeoutMs,
  intervalMs,
  safeCount,
  deadLetterId,
  json,
  instanceFilter,
  pruneOptions,
  waitOptions,
  orchestrationWaitOptions,
}
