'use strict'

const { Client } = require('./client')
const { callSync, typeError, rangeError } = require('./errors')
const { encode } = require('./json')
const { requireString, requireNonNegativeInt, requireSemver, describeValue } = require('./options')
const { checkKvValue, checkKvKeyCount, checkCustomStatus, checkTag, checkRootInstanceId } = require('./limits')

const DESCRIPTOR = Symbol('steadfast.task.descriptor')
const MAX_DELAY_MS = 0xffff_ffff
/**
 * Longest durable timer: 100 years. duroxide takes any u64 of ms; the cap keeps the fire time
 * (now + delay) a safe JS integer and inside every store's time range (PostgreSQL
 * timestamptz), so an absurd delay is a RangeError here and not a failed turn later.
 */
const MAX_TIMER_DELAY_MS = 100 * 365.25 * 24 * 3600 * 1000

/**
 * A durable task. Created by an OrchestrationContext method and `yield`ed by the generator;
 * the yield evaluates to the task's result (or throws its error).
 */
class ScheduledTask {
  constructor(descriptor) {
    this[DESCRIPTOR] = descriptor
  }

  /** Route an activity to workers whose tag filter accepts `tag`. */
  withTag(tag) {
    if (this[DESCRIPTOR].type !== 'activity') {
      throw typeError('ERR_INVALID_ARG_VALUE', 'withTag() applies only to scheduleActivity() tasks')
    }
    requireString('tag', tag)
    checkTag(tag)
    this[DESCRIPTOR] = { ...this[DESCRIPTOR], tag }
    return this
  }
}

const COMPOSABLE = new Set(['activity', 'activityWithRetry', 'timer', 'waitEvent', 'dequeueEvent', 'getValueFromInstance', 'subOrchestration', 'newGuid', 'utcNow'])

/** The same task, marked so its result gets a second JSON decode (duroxide-node's `*Typed`). */
function typed(task) {
  task[DESCRIPTOR] = { ...task[DESCRIPTOR], typed: true }
  return task
}

function activityOptions(options) {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object') throw typeError('ERR_INVALID_ARG_TYPE', `options must be an object like { sessionId } (got ${describeValue(options)})`)
  const out = {}
  for (const key of Object.keys(options)) {
    if (key === 'sessionId') out.sessionId = requireString('options.sessionId', options.sessionId)
    else if (key === 'tag') out.tag = checkTag(requireString('options.tag', options.tag))
    else throw typeError('ERR_INVALID_ARG_VALUE', `options.${key} is not a known option (sessionId, tag)`)
  }
  return out
}

function descriptorOf(task, where) {
  if (!(task instanceof ScheduledTask)) {
    throw typeError('ERR_INVALID_ARG_TYPE', `${where} must be a task created by an OrchestrationContext method (got ${describeValue(task)})`)
  }
  return task[DESCRIPTOR]
}

function composable(tasks, where) {
  return tasks.map((t, i) => {
    const d = descriptorOf(t, `${where}[${i}]`)
    if (!COMPOSABLE.has(d.type)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `${where}[${i}]: ${d.type} tasks cannot be combined with all()/race()`)
    }
    return d
  })
}

const BACKOFF_DEFAULTS = {
  none: { kind: 'none' },
  fixed: { kind: 'fixed', delayMs: 1000 },
  linear: { kind: 'linear', baseMs: 100, maxMs: 30_000 },
  exponential: { kind: 'exponential', baseMs: 100, multiplier: 2, maxMs: 30_000 },
}

function backoff(value) {
  if (value === undefined) return undefined
  if (typeof value === 'string') {
    const b = BACKOFF_DEFAULTS[value]
    if (!b) throw typeError('ERR_INVALID_ARG_VALUE', `retry.backoff must be "none", "fixed", "linear", "exponential" or an object (got ${describeValue(value)})`)
    return b
  }
  if (value === null || typeof value !== 'object') {
    throw typeError('ERR_INVALID_ARG_TYPE', `retry.backoff must be a string or an object (got ${describeValue(value)})`)
  }
  const base = BACKOFF_DEFAULTS[value.kind]
  if (!base) throw typeError('ERR_INVALID_ARG_VALUE', `retry.backoff.kind must be "none", "fixed", "linear" or "exponential" (got ${describeValue(value.kind)})`)
  const out = { ...base }
  for (const key of Object.keys(value)) {
    if (key === 'kind') continue
    if (!(key in base)) throw typeError('ERR_INVALID_ARG_VALUE', `retry.backoff.${key} is not an option of "${value.kind}" backoff`)
    if (key === 'multiplier') {
      if (typeof value.multiplier !== 'number' || !Number.isFinite(value.multiplier) || value.multiplier < 1 || value.multiplier > 100) {
        throw rangeError(`retry.backoff.multiplier must be a number between 1 and 100 (got ${describeValue(value.multiplier)})`)
      }
      out.multiplier = value.multiplier
    } else {
      out[key] = requireNonNegativeInt(`retry.backoff.${key}`, value[key], MAX_DELAY_MS)
    }
  }
  return out
}

function retryPolicy(retry) {
  if (retry === null || typeof retry !== 'object') {
    throw typeError('ERR_INVALID_ARG_TYPE', `retry must be an object like { maxAttempts: 3 } (got ${describeValue(retry)})`)
  }
  for (const key of Object.keys(retry)) {
    if (!['maxAttempts', 'timeoutMs', 'backoff'].includes(key)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `retry.${key} is not a known option (maxAttempts, timeoutMs, backoff)`)
    }
  }
  const { maxAttempts, timeoutMs } = retry
  if (typeof maxAttempts !== 'number' || !Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1000) {
    throw rangeError(`retry.maxAttempts must be an integer between 1 and 1000 (got ${describeValue(maxAttempts)})`)
  }
  const out = { maxAttempts }
  if (timeoutMs !== undefined) out.timeoutMs = requireNonNegativeInt('retry.timeoutMs', timeoutMs, MAX_DELAY_MS)
  const b = backoff(retry.backoff)
  if (b) out.backoff = b
  return out
}

/**
 * What an orchestration generator sees. Scheduling methods return tasks to `yield`; the
 * other methods act immediately and are only valid while the generator is running
 * (synchronously, within its turn).
 */
class OrchestrationContext {
  #native
  #turn

  constructor(nativeRuntime, turn, info) {
    this.#native = nativeRuntime
    this.#turn = turn
    /** @readonly */ this.instanceId = info.instanceId
    /** @readonly */ this.executionId = info.executionId
    /** @readonly */ this.orchestrationName = info.name
    /** @readonly */ this.orchestrationVersion = info.version
    Object.freeze(this)
  }

  scheduleActivity(name, input, options) {
    requireString('name', name)
    return new ScheduledTask({ type: 'activity', name, input: encode(input, 'input'), ...activityOptions(options) })
  }

  /** Run on the worker that holds `sessionId` (all of a session's activities share one worker). */
  scheduleActivityOnSession(name, input, sessionId) {
    requireString('sessionId', sessionId)
    return this.scheduleActivity(name, input, { sessionId })
  }

  scheduleActivityWithRetry(name, input, retry) {
    requireString('name', name)
    return new ScheduledTask({ type: 'activityWithRetry', name, input: encode(input, 'input'), retry: retryPolicy(retry) })
  }

  scheduleActivityWithRetryOnSession(name, input, retry, sessionId) {
    requireString('sessionId', sessionId)
    const task = this.scheduleActivityWithRetry(name, input, retry)
    task[DESCRIPTOR] = { ...task[DESCRIPTOR], sessionId }
    return task
  }

  scheduleTimer(delayMs) {
    requireNonNegativeInt('delayMs', delayMs, MAX_TIMER_DELAY_MS)
    return new ScheduledTask({ type: 'timer', delayMs })
  }

  waitForEvent(name) {
    requireString('name', name)
    return new ScheduledTask({ type: 'waitEvent', name })
  }

  scheduleSubOrchestration(name, input, options) {
    requireString('name', name)
    const d = { type: 'subOrchestration', name, input: encode(input, 'input') }
    if (options !== undefined) {
      if (options === null || typeof options !== 'object') throw typeError('ERR_INVALID_ARG_TYPE', 'options must be an object')
      for (const key of Object.keys(options)) {
        if (key !== 'instanceId' && key !== 'version') throw typeError('ERR_INVALID_ARG_VALUE', `options.${key} is not a known option (instanceId, version)`)
      }
      if (options.instanceId !== undefined) d.instanceId = requireString('options.instanceId', options.instanceId)
      if (options.version !== undefined) d.version = requireSemver('options.version', options.version)
    }
    return new ScheduledTask(d)
  }

  scheduleSubOrchestrationWithId(name, instanceId, input) {
    return this.scheduleSubOrchestration(name, input, { instanceId })
  }

  scheduleSubOrchestrationVersioned(name, version, input) {
    return this.scheduleSubOrchestration(name, input, { version })
  }

  scheduleSubOrchestrationVersionedWithId(name, version, instanceId, input) {
    return this.scheduleSubOrchestration(name, input, { version, instanceId })
  }

  /** Next message of queue `queueName` (see Client.enqueueEvent); messages wait for their dequeue. */
  dequeueEvent(queueName) {
    requireString('queueName', queueName)
    return new ScheduledTask({ type: 'dequeueEvent', queue: queueName })
  }

  /** Read key `key` of another instance (a recorded system activity); yields the string or null. */
  getValueFromInstance(instanceId, key) {
    requireString('instanceId', instanceId)
    requireString('key', key)
    return new ScheduledTask({ type: 'getValueFromInstance', instanceId, key })
  }

  /** Start another orchestration without waiting for it (detached); yields null at once. */
  startOrchestration(name, instanceId, input) {
    return this.#detached(name, undefined, instanceId, input)
  }

  startOrchestrationVersioned(name, version, instanceId, input) {
    return this.#detached(name, requireSemver('version', version), instanceId, input)
  }

  #detached(name, version, instanceId, input) {
    requireString('name', name)
    checkRootInstanceId('instanceId', requireString('instanceId', instanceId))
    const d = { type: 'startOrchestration', name, instanceId, input: encode(input, 'input') }
    if (version !== undefined) d.version = version
    return new ScheduledTask(d)
  }

  newGuid() {
    return new ScheduledTask({ type: 'newGuid' })
  }

  utcNow() {
    return new ScheduledTask({ type: 'utcNow' })
  }

  continueAsNew(input, version) {
    const d = { type: 'continueAsNew', input: encode(input, 'input') }
    if (version !== undefined) d.version = requireSemver('version', version)
    return new ScheduledTask(d)
  }

  continueAsNewVersioned(input, version) {
    return this.continueAsNew(input, requireSemver('version', version))
  }

  all(tasks) {
    if (!Array.isArray(tasks)) throw typeError('ERR_INVALID_ARG_TYPE', 'all() takes an array of tasks')
    return new ScheduledTask({ type: 'all', tasks: composable(tasks, 'tasks') })
  }

  race(...tasks) {
    const list = tasks.length === 1 && Array.isArray(tasks[0]) ? tasks[0] : tasks
    if (list.length < 2) throw rangeError(`race() needs at least 2 tasks (got ${list.length})`)
    return new ScheduledTask({ type: 'race', tasks: composable(list, 'tasks') })
  }

  setCustomStatus(status) {
    checkCustomStatus(status)
    callSync(() => this.#native.orchSetCustomStatus(this.#turn, status))
  }

  resetCustomStatus() {
    callSync(() => this.#native.orchSetCustomStatus(this.#turn, null))
  }

  getCustomStatus() {
    return callSync(() => this.#native.orchGetCustomStatus(this.#turn)) ?? null
  }

  setValue(key, value) {
    requireString('key', key)
    if (typeof value !== 'string') throw typeError('ERR_INVALID_ARG_TYPE', 'value must be a string (JSON.stringify objects)')
    checkKvValue(key, value)
    checkKvKeyCount(key, this.getValue(key) !== null, this.getKvLength())
    callSync(() => this.#native.orchSetValue(this.#turn, key, value))
  }

  getValue(key) {
    requireString('key', key)
    return callSync(() => this.#native.orchGetValue(this.#turn, key)) ?? null
  }

  clearValue(key) {
    requireString('key', key)
    callSync(() => this.#native.orchClearValue(this.#turn, key))
  }

  clearAllValues() {
    callSync(() => this.#native.orchClearAllValues(this.#turn))
  }

  /** Every key/value of this instance as a plain object. */
  getKvAllValues() {
    return { ...callSync(() => this.#native.orchGetAllValues(this.#turn)) }
  }

  /** The keys, sorted. */
  getKvAllKeys() {
    return callSync(() => this.#native.orchGetAllKeys(this.#turn))
  }

  getKvLength() {
    return callSync(() => this.#native.orchGetKvLength(this.#turn))
  }

  /** Clear the keys last written before `cutoffMs` (ms since the epoch); returns how many. A replayed
   *  setValue is stamped again, so this prunes keys carried over by continue-as-new. */
  pruneKvValuesUpdatedBefore(cutoffMs) {
    requireNonNegativeInt('cutoffMs', cutoffMs, Number.MAX_SAFE_INTEGER)
    return callSync(() => this.#native.orchPruneValuesUpdatedBefore(this.#turn, cutoffMs))
  }

  // duroxide-node's typed variants: the result, when it is a string holding JSON, is decoded
  // once more (for activities that return JSON.stringify(...) text).
  scheduleActivityTyped(name, input, options) {
    return typed(this.scheduleActivity(name, input, options))
  }

  scheduleActivityOnSessionTyped(name, input, sessionId) {
    return typed(this.scheduleActivityOnSession(name, input, sessionId))
  }

  scheduleActivityWithRetryTyped(name, input, retry) {
    return typed(this.scheduleActivityWithRetry(name, input, retry))
  }

  scheduleActivityWithRetryOnSessionTyped(name, input, retry, sessionId) {
    return typed(this.scheduleActivityWithRetryOnSession(name, input, retry, sessionId))
  }

  scheduleSubOrchestrationTyped(name, input, options) {
    return typed(this.scheduleSubOrchestration(name, input, options))
  }

  scheduleSubOrchestrationWithIdTyped(name, instanceId, input) {
    return typed(this.scheduleSubOrchestrationWithId(name, instanceId, input))
  }

  waitForEventTyped(name) {
    return typed(this.waitForEvent(name))
  }

  dequeueEventTyped(queueName) {
    return typed(this.dequeueEvent(queueName))
  }

  allTyped(tasks) {
    return typed(this.all(tasks))
  }

  raceTyped(...tasks) {
    return typed(this.race(...tasks))
  }

  startOrchestrationTyped(name, instanceId, input) {
    return this.startOrchestration(name, instanceId, input)
  }

  startOrchestrationVersionedTyped(name, version, instanceId, input) {
    return this.startOrchestrationVersioned(name, version, instanceId, input)
  }

  continueAsNewTyped(input, version) {
    return this.continueAsNew(input, version)
  }

  isReplaying() {
    return callSync(() => this.#native.orchIsReplaying(this.#turn))
  }

  traceInfo(message) {
    this.#trace('info', message)
  }

  traceWarn(message) {
    this.#trace('warn', message)
  }

  traceError(message) {
    this.#trace('error', message)
  }

  traceDebug(message) {
    this.#trace('debug', message)
  }

  #trace(level, message) {
    callSync(() => this.#native.orchTrace(this.#turn, level, String(message)))
  }
}

/** What an activity function sees while it runs. */
class ActivityContext {
  #native
  #id
  #tag

  constructor(nativeRuntime, info, signal) {
    this.#native = nativeRuntime
    this.#id = info.id
    /**
     * Aborts when duroxide cancels the activity (its orchestration no longer needs it, or its
     * lease was lost), with an `AbortError` whose code is `ERR_STEADFAST_ACTIVITY_CANCELLED`.
     * @readonly
     */
    this.signal = signal
    /** @readonly */ this.instanceId = info.instanceId
    /** @readonly */ this.executionId = info.executionId
    /** @readonly */ this.orchestrationName = info.orchestrationName
    /** @readonly */ this.orchestrationVersion = info.orchestrationVersion
    /** @readonly */ this.activityName = info.activityName
    /** @readonly */ this.workerId = info.workerId
    /** @readonly */ this.sessionId = info.sessionId ?? null
    this.#tag = info.tag ?? null
    Object.freeze(this)
  }

  /** The activity's worker tag (`withTag` / `{ tag }`), or null. A method, as in duroxide-node. */
  tag() {
    return this.#tag
  }

  traceInfo(message) {
    this.#trace('info', message)
  }

  traceWarn(message) {
    this.#trace('warn', message)
  }

  traceError(message) {
    this.#trace('error', message)
  }

  traceDebug(message) {
    this.#trace('debug', message)
  }

  #trace(level, message) {
    // Logging after the activity returned is ignored rather than thrown.
    try {
      this.#native.activityTrace(this.#id, level, String(message))
    } catch {}
  }

  /** True once the orchestration no longer needs this result (terminal, or lost a race). */
  isCancelled() {
    return callSync(() => this.#native.activityIsCancelled(this.#id))
  }

  /** A Client on the runtime's provider. */
  getClient() {
    return Client._fromNative(callSync(() => this.#native.activityClient(this.#id)))
  }
}

module.exports = { ScheduledTask, OrchestrationContext, ActivityContext, DESCRIPTOR }
