'use strict'

const native = require('./native')
const { callAsync, typeError } = require('./errors')
const { encode, decode } = require('./json')
const {
  requireString,
  requireNonNegativeInt,
  requireId,
  deadLetterListOptions,
  deadLetterPurgeOptions,
} = require('./options')
const { nativeOf } = require('./providers')

const FROM_NATIVE = Symbol('steadfast.client.fromNative')

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

  async startOrchestration(instanceId, orchestrationName, input) {
    requireString('instanceId', instanceId)
    requireString('orchestrationName', orchestrationName)
    const text = encode(input, 'input')
    await callAsync(() => this.#native.startOrchestration(instanceId, orchestrationName, text))
  }

  async startOrchestrationVersioned(instanceId, orchestrationName, input, version) {
    requireString('instanceId', instanceId)
    requireString('orchestrationName', orchestrationName)
    requireString('version', version)
    const text = encode(input, 'input')
    await callAsync(() => this.#native.startOrchestrationVersioned(instanceId, orchestrationName, version, text))
  }

  async getStatus(instanceId) {
    requireString('instanceId', instanceId)
    return status(await callAsync(() => this.#native.getStatus(instanceId)))
  }

  async waitForOrchestration(instanceId, timeoutMs = 30_000) {
    requireString('instanceId', instanceId)
    requireNonNegativeInt('timeoutMs', timeoutMs)
    return status(await callAsync(() => this.#native.waitForOrchestration(instanceId, timeoutMs)))
  }

  async raiseEvent(instanceId, eventName, data) {
    requireString('instanceId', instanceId)
    requireString('eventName', eventName)
    const text = encode(data, 'data')
    await callAsync(() => this.#native.raiseEvent(instanceId, eventName, text))
  }

  /** Send `data` to queue `queueName` of an instance; the orchestration reads it with `ctx.dequeueEvent`. */
  async enqueueEvent(instanceId, queueName, data) {
    requireString('instanceId', instanceId)
    requireString('queueName', queueName)
    const text = encode(data, 'data')
    await callAsync(() => this.#native.enqueueEvent(instanceId, queueName, text))
  }

  async cancelInstance(instanceId, reason = '') {
    requireString('instanceId', instanceId)
    if (typeof reason !== 'string') throw typeError('ERR_INVALID_ARG_TYPE', 'reason must be a string')
    await callAsync(() => this.#native.cancelInstance(instanceId, reason))
  }

  async listAllInstances() {
    return callAsync(() => this.#native.listAllInstances())
  }

  async getInstanceInfo(instanceId) {
    requireString('instanceId', instanceId)
    const i = await callAsync(() => this.#native.getInstanceInfo(instanceId))
    const out = { ...i }
    if (i.output != null) out.output = decode(i.output)
    else delete out.output
    if (i.parentInstanceId == null) delete out.parentInstanceId
    return out
  }

  async deleteInstance(instanceId, force = false) {
    requireString('instanceId', instanceId)
    if (typeof force !== 'boolean') throw typeError('ERR_INVALID_ARG_TYPE', 'force must be a boolean')
    return callAsync(() => this.#native.deleteInstance(instanceId, force))
  }

  // Dead letters (steadfast-pg only; the native layer rejects with ERR_STEADFAST_UNSUPPORTED
  // on SQLite).

  async listDeadLetters(options) {
    const { instanceId, afterId, limit } = deadLetterListOptions(options)
    const letters = await callAsync(() => this.#native.listDeadLetters(instanceId, afterId, limit))
    return letters.map(deadLetter)
  }

  async getDeadLetter(id) {
    requireId('id', id)
    const d = await callAsync(() => this.#native.getDeadLetter(id))
    return d == null ? null : deadLetter(d)
  }

  async requeueDeadLetter(id) {
    requireId('id', id)
    return callAsync(() => this.#native.requeueDeadLetter(id))
  }

  async purgeDeadLetters(options) {
    const { instanceId, deadBeforeMs } = deadLetterPurgeOptions(options)
    return callAsync(() => this.#native.purgeDeadLetters(instanceId, deadBeforeMs))
  }
}

module.exports = { Client }
