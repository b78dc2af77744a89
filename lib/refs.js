'use strict'

// Typed references (defineActivity, defineOrchestration): an activity or orchestration bound to
// its name, an orchestration optionally to one version, in a frozen object that also carries the
// function. One value then registers the function and stands for its name wherever a name is
// taken, and lib/index.d.ts carries its input and output types through those calls. At run time
// a reference counts as its name: the checks a name passes were made when it was defined.

const { typeError } = require('./errors')
const { requireString, requireSemver, requireFunction, requireGeneratorFunction, describeValue } = require('./args')

/** Every reference made here: an object that only looks like one is not accepted. */
const references = new WeakSet()

const DEFINERS = { activity: 'defineActivity()', orchestration: 'defineOrchestration()' }

function reference(fields) {
  const ref = Object.freeze(fields)
  references.add(ref)
  return ref
}

function defineActivity(name, fn) {
  requireString('name', name)
  requireFunction('fn', fn)
  return reference({ kind: 'activity', name, fn })
}

/** Registers as version 1.0.0; starts and sub-orchestrations run the latest registered version. */
function defineOrchestration(name, fn) {
  requireString('name', name)
  requireGeneratorFunction('fn', fn)
  return reference({ kind: 'orchestration', name, fn })
}

/** Registers, starts and runs as sub-orchestration exactly `version`. */
function defineOrchestrationVersioned(name, version, fn) {
  requireString('name', name)
  requireSemver('version', version)
  requireGeneratorFunction('fn', fn)
  return reference({ kind: 'orchestration', name, version, fn })
}

/** `value` when it is a reference of `kind`; undefined when it is no reference at all. */
function referenceOf(arg, value, kind, expected) {
  if (!references.has(value)) return undefined
  if (value.kind !== kind) throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be ${expected} (got a reference to ${value.kind} "${value.name}")`)
  return value
}

/** A name argument: a string, or a reference of `kind`; returns `{ name, version? }`. */
function target(arg, value, kind) {
  if (typeof value === 'string') return { name: requireString(arg, value) }
  const ref = referenceOf(arg, value, kind, `an ${kind} name or reference`)
  if (ref) return ref
  throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a non-empty string or a reference made by ${DEFINERS[kind]} (got ${describeValue(value)})`)
}

function activityName(arg, value) {
  return target(arg, value, 'activity').name
}

function orchestrationTarget(arg, value) {
  return target(arg, value, 'orchestration')
}

/**
 * The version a call runs: the one it names, else its target's (a versioned reference), else
 * undefined (the latest). A call may not name another version than its reference.
 */
function versionOf(arg, orchestration, given) {
  if (given === undefined || orchestration.version === undefined) return given ?? orchestration.version
  if (given !== orchestration.version) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${arg} must be ${orchestration.version}, the version of the reference to "${orchestration.name}" (got ${given})`)
  }
  return given
}

/** A register call's `(name, fn)` or `(reference)`, as `{ name, version?, fn }`; a name and fn are checked by the caller. */
function registration(kind, nameOrReference, fn) {
  const ref = referenceOf('name', nameOrReference, kind, `an ${kind} name or reference`)
  if (!ref) return { name: nameOrReference, fn }
  if (fn !== undefined) throw typeError('ERR_INVALID_ARG_VALUE', 'fn must be left out when registering a reference: the reference carries its function')
  return ref
}

function requireOrchestrationReference(arg, value) {
  const ref = referenceOf(arg, value, 'orchestration', 'an orchestration reference')
  if (ref) return ref
  throw typeError('ERR_INVALID_ARG_TYPE', `${arg} must be a reference made by ${DEFINERS.orchestration} (got ${describeValue(value)})`)
}

module.exports = {
  defineActivity,
  defineOrchestration,
  defineOrchestrationVersioned,
  activityName,
  orchestrationTarget,
  versionOf,
  registration,
  requireOrchestrationReference,
}
