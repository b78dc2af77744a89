'use strict'

const { Client } = require('./client')
const { callSync, typeError, rangeError } = require('./errors')
const { encode } = require('./json')
const { requireString, requireSemver, requireInstance, requireArray, integer } = require('./args')
const { applyTable, applyOptionalTable } = require('./options')
const { ACTIVITY_FIELDS, SUB_ORCHESTRATION_FIELDS, RETRY_FIELDS } = require('./option-tables')
const { instanceId: requireInstanceId, rootInstanceId } = require('./client-args')
const { checkKvValue, checkKvKeyCount, checkCustomStatus, checkTag } = require('./limits')
const { activityName, orchestrationTarget, versionOf } = require('./refs')

const DESCRIPTOR = Symbol('steadfast.task.descriptor')
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

  /**
   * `yield* task`: the delegation yields the task itself, so the driver sees what a plain
   * `yield task` gives it, and returns the result; TypeScript types this form (not `yield`).
   */
  *[Symbol.iterator]() {
    return yield this
  }

  /** Route an activity to workers whose tag filter accepts `tag`. */
  withTag(tag) {
    if (this[DESCRIPTOR].type !== 'activity') {
      throw typeError('ERR_INVALID_ARG_VALUE', 'withTag() applies only to scheduleActivity() tasks')
    }
    checkTag('tag', tag)
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

function descriptorOf(task, name) {
  return requireInstance(name, task, ScheduledTask, 'a task created by an OrchestrationContext method')[DESCRIPTOR]
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
    const activity = activityName('name', name)
    return new ScheduledTask({ type: 'activity', name: activity, input: encode(input, 'input'), ...applyOptionalTable('options', options, ACTIVITY_FIELDS) })
  }

  /** Run on the worker that holds `sessionId` (all of a session's activities share one worker). */
  scheduleActivityOnSession(name, input, sessionId) {
    requireString('sessionId', sessionId)
    return this.scheduleActivity(name, input, { sessionId })
  }

  scheduleActivityWithRetry(name, input, retry) {
    const activity = activityName('name', name)
    return new ScheduledTask({ type: 'activityWithRetry', name: activity, input: encode(input, 'input'), retry: { ...applyTable('retry', retry, RETRY_FIELDS) } })
  }

  scheduleActivityWithRetryOnSession(name, input, retry, sessionId) {
    requireString('sessionId', sessionId)
    const task = this.scheduleActivityWithRetry(name, input, retry)
    task[DESCRIPTOR] = { ...task[DESCRIPTOR], sessionId }
    return task
  }

  scheduleTimer(delayMs) {
    integer('delayMs', delayMs, 0, MAX_TIMER_DELAY_MS)
    return new ScheduledTask({ type: 'timer', delayMs })
  }

  waitForEvent(name) {
    requireString('name', name)
    return new ScheduledTask({ type: 'waitEvent', name })
  }

  scheduleSubOrchestration(name, input, options) {
    const orchestration = orchestrationTarget('name', name)
    const d = { type: 'subOrchestration', name: orchestration.name, input: encode(input, 'input'), ...applyOptionalTable('options', options, SUB_ORCHESTRATION_FIELDS) }
    const version = versionOf('options.version', orchestration, d.version)
    if (version !== undefined) d.version = version
    return new ScheduledTask(d)
  }

  scheduleSubOrchestrationWithId(name, instanceId, input) {
    requireInstanceId('instanceId', instanceId)
    return this.scheduleSubOrchestration(name, input, { instanceId })
  }

  scheduleSubOrchestrationVersioned(name, version, input) {
    requireSemver('version', version)
    versionOf('version', orchestrationTarget('name', name), version)
    return this.scheduleSubOrchestration(name, input, { version })
  }

  scheduleSubOrchestrationVersionedWithId(name, version, instanceId, input) {
    requireSemver('version', version)
    versionOf('version', orchestrationTarget('name', name), version)
    requireInstanceId('instanceId', instanceId)
    return this.scheduleSubOrchestration(name, input, { version, instanceId })
  }

  /** Next message of queue `queueName` (see Client.enqueueEvent); messages wait for their dequeue. */
  dequeueEvent(queueName) {
    requireString('queueName', queueName)
    return new ScheduledTask({ type: 'dequeueEvent', queue: queueName })
  }

  /** Read key `key` of another instance (a recorded system activity); yields the string or null. */
  getValueFromInstance(instanceId, key) {
    requireInstanceId('instanceId', instanceId)
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
    const orchestration = orchestrationTarget('name', name)
    rootInstanceId('instanceId', instanceId)
    const d = { type: 'startOrchestration', name: orchestration.name, instanceId, input: encode(input, 'input') }
    const pinned = versionOf('version', orchestration, version)
    if (pinned !== undefined) d.version = pinned
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
    return new ScheduledTask({ type: 'all', tasks: composable(requireArray('tasks', tasks, 0, Infinity, 'tasks'), 'tasks') })
  }

  race(...tasks) {
    const list = tasks.length === 1 && Array.isArray(tasks[0]) ? tasks[0] : tasks
    if (list.length < 2) throw rangeError(`tasks: race() needs at least 2 tasks (got ${list.length})`)
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
    integer('cutoffMs', cutoffMs, 0, Number.MAX_SAFE_INTEGER)
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
