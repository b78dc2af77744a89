'use strict'

const native = require('./native')
const { callAsync, typeError } = require('./errors')
const { encode, decode } = require('./json')
const { requireString, requireNonNegativeInt } = require('./options')
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

/** Starts, signals, inspects and deletes orchestration instances. */
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
}

module.exports = { Client }
