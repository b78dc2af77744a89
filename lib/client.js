'use strict'

const native = require('./native')
const { callAsync, SteadfastError, typeError } = require('./errors')
const { decode } = require('./json')
const args = require('./client-args')
const { oneOf, requireBoolean, requireSemver } = require('./args')
const { abortable } = require('./abortable')
const { deadLetterListOptions, deadLetterPurgeOptions, listInstancesOptions, startOptions } = require('./options')
const { nativeOf } = require('./providers')
const { versionOf } = require('./refs')

const FROM_NATIVE = Symbol('steadfast.client.fromNative')

/** duroxide-node's default for every wait. */
const DEFAULT_TIMEOUT_MS = 30_000

function status(s) {
  const out = { status: s.status, customStatusVersion: s.customStatusVersion }
  if (s.output != null) out.output = decode(s.output)
  if (s.error != null) out.error = s.error
  if (s.errorCategory != null) out.errorCategory = s.errorCategory
  if (s.customStatus != null) out.customStatus = s.customStatus
  return out
}

/** A native dead letter as the public shape: every field present, absent ones null. */
function deadLetter(d) {
  return {
    id: d.id,
    queue: d.queue,
    instanceId: d.instanceId,
    executionId: d.executionId ?? null,
    activityId: d.activityId ?? null,
    attemptCount: d.attemptCount,
    maxAttempts: d.maxAttempts ?? null,
    reason: d.reason,
    error: d.error ?? null,
    workItem: d.workItem,
    sessionId: d.sessionId ?? null,
    tag: d.tag ?? null,
    enqueuedAt: d.enqueuedAt,
    deadAt: d.deadAt,
  }
}

/** An instance's info as JS sees it: output parsed, absent fields left out. */
function instanceInfo(i) {
  const out = { ...i }
  if (i.output != null) out.output = decode(i.output)
  else delete out.output
  if (i.parentInstanceId == null) delete out.parentInstanceId
  return out
}

/**
 * Starts, signals, inspects and deletes orchestration instances; on PostgreSQL also lists,
 * requeues and purges dead letters.
 */
class Client {
  #native

  constructor(provider, nativeClient) {
    if (provider === FROM_NATIVE) {
      this.#native = nativeClient
      return
    }
    this.#native = new native.NativeClient(nativeOf(provider, 'provider'))
  }

  /** @internal */
  static _fromNative(nativeClient) {
    return new Client(FROM_NATIVE, nativeClient)
  }

  async startOrchestration(instanceId, orchestrationName, input, options) {
    args.rootInstanceId('instanceId', instanceId)
    const orchestration = args.orchestration('orchestrationName', orchestrationName)
    const text = args.json('input', input)
    const { ifExists } = startOptions(options)
    await this.#start(instanceId, orchestration.name, text, orchestration.version, ifExists)
  }

  async startOrchestrationVersioned(instanceId, orchestrationName, input, version, options) {
    args.rootInstanceId('instanceId', instanceId)
    const orchestration = args.orchestration('orchestrationName', orchestrationName)
    const text = args.json('input', input)
    requireSemver('version', version)
    const { ifExists } = startOptions(options)
    await this.#start(instanceId, orchestration.name, text, versionOf('version', orchestration, version), ifExists)
  }

  /** Start `name` at `version`, or at the latest registered one when it is undefined. */
  #start(instanceId, name, text, version, ifExists) {
    if (ifExists === 'throw') return callAsync(() => this.#native.startOrchestrationExclusive(instanceId, name, version, text))
    if (version === undefined) return callAsync(() => this.#native.startOrchestration(instanceId, name, text))
    return callAsync(() => this.#native.startOrchestrationVersioned(instanceId, name, version, text))
  }

  async getStatus(instanceId) {
    args.instanceId('instanceId', instanceId)
    return status(await callAsync(() => this.#native.getStatus(instanceId)))
  }

  async waitForOrchestration(instanceId, timeoutMs = DEFAULT_TIMEOUT_MS, options) {
    args.instanceId('instanceId', instanceId)
    args.timeoutMs('timeoutMs', timeoutMs)
    const { signal, orchestration } = args.orchestrationWaitOptions('options', options)
    const s = status(await abortable(signal, (waitId) => callAsync(() => this.#native.waitForOrchestration(instanceId, timeoutMs, waitId))))
    if (orchestration) await this.#requireInstanceOf(instanceId, orchestration)
    return s
  }

  /** `options.orchestration` types the output, so the instance must really run that orchestration. */
  async #requireInstanceOf(instanceId, orchestration) {
    const { orchestrationName } = await callAsync(() => this.#native.getInstanceInfo(instanceId))
    if (orchestrationName !== orchestration.name) {
      throw typeError(
        'ERR_INVALID_ARG_VALUE',
        `options.orchestration must be a reference to "${orchestrationName}", the orchestration instance ${JSON.stringify(instanceId)} runs (got a reference to "${orchestration.name}")`,
      )
    }
  }

  async waitForStatusChange(instanceId, lastSeenVersion, pollIntervalMs = 500, timeoutMs = DEFAULT_TIMEOUT_MS, options) {
    args.instanceId('instanceId', instanceId)
    args.safeCount('lastSeenVersion', lastSeenVersion)
    args.intervalMs('pollIntervalMs', pollIntervalMs)
    args.timeoutMs('timeoutMs', timeoutMs)
    const signal = args.waitOptions('options', options)
    return status(
      await abortable(signal, (waitId) =>
        callAsync(() => this.#native.waitForStatusChange(instanceId, lastSeenVersion, pollIntervalMs, timeoutMs, waitId)),
      ),
    )
  }

  async raiseEvent(instanceId, eventName, data) {
    args.instanceId('instanceId', instanceId)
    args.name('eventName', eventName)
    const text = args.json('data', data)
    await callAsync(() => this.#native.raiseEvent(instanceId, eventName, text))
  }

  async enqueueEvent(instanceId, queueName, data) {
    args.instanceId('instanceId', instanceId)
    args.name('queueName', queueName)
    const text = args.json('data', data)
    await callAsync(() => this.#native.enqueueEvent(instanceId, queueName, text))
  }

  async cancelInstance(instanceId, reason = '') {
    args.instanceId('instanceId', instanceId)
    args.reason('reason', reason)
    await callAsync(() => this.#native.cancelInstance(instanceId, reason))
  }

  // Typed aliases (duroxide-node names; JSON encoding already happens in the plain methods).

  async startOrchestrationTyped(instanceId, orchestrationName, input, options) {
    return this.startOrchestration(instanceId, orchestrationName, input, options)
  }

  async startOrchestrationVersionedTyped(instanceId, orchestrationName, input, version, options) {
    return this.startOrchestrationVersioned(instanceId, orchestrationName, input, version, options)
  }

  async raiseEventTyped(instanceId, eventName, data) {
    return this.raiseEvent(instanceId, eventName, data)
  }

  async enqueueEventTyped(instanceId, queueName, data) {
    return this.enqueueEvent(instanceId, queueName, data)
  }

  /** The parsed output; a failed instance rejects with ERR_STEADFAST_ORCHESTRATION_FAILED. */
  async waitForOrchestrationTyped(instanceId, timeoutMs = DEFAULT_TIMEOUT_MS, options) {
    const s = await this.waitForOrchestration(instanceId, timeoutMs, options)
    if (s.status === 'Failed') {
      const e = new SteadfastError('ERR_STEADFAST_ORCHESTRATION_FAILED', s.error || 'Orchestration failed')
      e.errorCategory = s.errorCategory
      throw e
    }
    return s.output
  }

  // Key-value store of an instance (written by ctx.setValue).

  async getValue(instanceId, key) {
    args.instanceId('instanceId', instanceId)
    args.name('key', key)
    return callAsync(() => this.#native.getValue(instanceId, key))
  }

  async waitForValue(instanceId, key, timeoutMs = DEFAULT_TIMEOUT_MS, options) {
    args.instanceId('instanceId', instanceId)
    args.name('key', key)
    args.timeoutMs('timeoutMs', timeoutMs)
    const signal = args.waitOptions('options', options)
    const value = await abortable(signal, (waitId) => callAsync(() => this.#native.waitForValue(instanceId, key, timeoutMs, waitId)))
    if (value == null) {
      throw new SteadfastError('ERR_STEADFAST_TIMEOUT', `Timed out waiting for value '${key}' on instance '${instanceId}'`)
    }
    return value
  }

  async getKvAllValues(instanceId) {
    args.instanceId('instanceId', instanceId)
    return { ...(await callAsync(() => this.#native.getKvAllValues(instanceId))) }
  }

  // Metrics and listings.

  async getSystemMetrics() {
    return callAsync(() => this.#native.getSystemMetrics())
  }

  async getQueueDepths() {
    return callAsync(() => this.#native.getQueueDepths())
  }

  async getOrchestrationStats(instanceId) {
    args.instanceId('instanceId', instanceId)
    return (await callAsync(() => this.#native.getOrchestrationStats(instanceId))) ?? null
  }

  async listAllInstances() {
    return callAsync(() => this.#native.listAllInstances())
  }

  async listInstancesByStatus(status) {
    oneOf('status', status, args.INSTANCE_STATUSES)
    return callAsync(() => this.#native.listInstancesByStatus(status))
  }

  async getInstanceInfo(instanceId) {
    args.instanceId('instanceId', instanceId)
    return instanceInfo(await callAsync(() => this.#native.getInstanceInfo(instanceId)))
  }

  async listInstances(options) {
    const { status, limit, ...filter } = listInstancesOptions(options)
    const query = { ...filter, statuses: status === undefined ? undefined : [status], limit }
    const page = await callAsync(() => this.#native.listInstancePage(query))
    return { instances: page.instances.map(instanceInfo), nextCursor: page.nextCursor ?? null }
  }

  // Executions and history.

  async listExecutions(instanceId) {
    args.instanceId('instanceId', instanceId)
    return callAsync(() => this.#native.listExecutions(instanceId))
  }

  async getExecutionInfo(instanceId, executionId) {
    args.instanceId('instanceId', instanceId)
    args.safeCount('executionId', executionId, 1)
    const e = await callAsync(() => this.#native.getExecutionInfo(instanceId, executionId))
    const out = { ...e }
    if (e.output != null) out.output = decode(e.output)
    else delete out.output
    if (e.completedAt == null) delete out.completedAt
    return out
  }

  async readExecutionHistory(instanceId, executionId) {
    args.instanceId('instanceId', instanceId)
    args.safeCount('executionId', executionId, 1)
    const events = await callAsync(() => this.#native.readExecutionHistory(instanceId, executionId))
    return events.map((e) => {
      const out = { ...e }
      if (e.sourceEventId == null) delete out.sourceEventId
      if (e.data == null) delete out.data
      return out
    })
  }

  async getInstanceTree(instanceId) {
    args.instanceId('instanceId', instanceId)
    return callAsync(() => this.#native.getInstanceTree(instanceId))
  }

  // Deletion and pruning.

  async deleteInstance(instanceId, force = false) {
    args.instanceId('instanceId', instanceId)
    requireBoolean('force', force)
    return callAsync(() => this.#native.deleteInstance(instanceId, force))
  }

  async deleteInstanceBulk(filter = {}) {
    const f = args.instanceFilter('filter', filter)
    return callAsync(() => this.#native.deleteInstanceBulk(f))
  }

  async pruneExecutions(instanceId, options = {}) {
    args.instanceId('instanceId', instanceId)
    const o = args.pruneOptions('options', options)
    return callAsync(() => this.#native.pruneExecutions(instanceId, o))
  }

  async pruneExecutionsBulk(filter = {}, options = {}) {
    const f = args.instanceFilter('filter', filter)
    const o = args.pruneOptions('options', options)
    return callAsync(() => this.#native.pruneExecutionsBulk(f, o))
  }

  // Dead letters (steadfast-pg only; the native layer rejects with ERR_STEADFAST_UNSUPPORTED
  // on SQLite).

  async listDeadLetters(options) {
    const { instanceId, afterId, limit } = deadLetterListOptions(options)
    const letters = await callAsync(() => this.#native.listDeadLetters(instanceId, afterId, limit))
    return letters.map(deadLetter)
  }

  async getDeadLetter(id) {
    args.deadLetterId('id', id)
    const d = await callAsync(() => this.#native.getDeadLetter(id))
    return d == null ? null : deadLetter(d)
  }

  async requeueDeadLetter(id) {
    args.deadLetterId('id', id)
    return callAsync(() => this.#native.requeueDeadLetter(id))
  }

  async purgeDeadLetters(options) {
    const { instanceId, deadBeforeMs } = deadLetterPurgeOptions(options)
    return callAsync(() => this.#native.purgeDeadLetters(instanceId, deadBeforeMs))
  }
}

module.exports = { Client }
