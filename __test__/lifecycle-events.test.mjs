// Lifecycle events on the Runtime EventEmitter, for real orchestrations on both backends:
// an execution started / completed / failed / continued as new, an activity failed. Each
// is announced after its ack committed, once, in the order the instance went through them.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { createRequire } from 'node:module'
import { FAST, backends, runtimeOn, uid, until } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { LIFECYCLE_KINDS, trackLifecycleListeners } = require('../lib/lifecycle.js')

const KINDS = ['orchestrationStarted', 'orchestrationCompleted', 'orchestrationFailed', 'orchestrationContinuedAsNew', 'activityFailed']

function register(rt) {
  rt.registerActivity('Boom', async () => {
    const e = new Error('boom happened')
    e.code = 'E_BOOM'
    throw e
  })
  rt.registerActivity('Echo', async (_ctx, x) => x)
  rt.registerOrchestration('Child', function* (_ctx, x) {
    return x * 2
  })
  rt.registerOrchestration('Parent', function* (ctx, x) {
    try {
      yield ctx.scheduleActivity('Boom', x)
    } catch {}
    return yield ctx.scheduleSubOrchestration('Child', x, { instanceId: `${ctx.instanceId}-child` })
  })
  rt.registerOrchestration('Failing', function* () {
    throw new Error('orchestration gave up')
  })
  rt.registerOrchestration('Loop', function* (ctx, n) {
    if (n < 1) return yield ctx.continueAsNew(n + 1)
    return yield ctx.scheduleActivity('Echo', n)
  })
}

for (const backend of backends('lifecycle')) {
  describe(`lifecycle events (${backend.name})`, () => {
    const fx = runtimeOn(backend, FAST, register)
    const seen = []
    const record = (e) => seen.push(e)
    const of = (id) => seen.filter((e) => e.instanceId === id)

    test('every kind is typed, announced once and in order', async () => {
      for (const kind of KINDS) fx.runtime.on(kind, record)
      const parent = uid('parent')
      const failing = uid('failing')
      const loop = uid('loop')
      await fx.client.startOrchestration(parent, 'Parent', 21)
      await fx.client.startOrchestration(failing, 'Failing', null)
      await fx.client.startOrchestration(loop, 'Loop', 0)
      for (const id of [parent, failing, loop]) await fx.client.waitForOrchestration(id, 30_000)
      await fx.client.waitForOrchestration(`${parent}-child`, 30_000)
      await until(() => of(loop).some((e) => e.kind === 'orchestrationCompleted'), 10_000, 'the loop to complete')
      await until(() => of(parent).some((e) => e.kind === 'orchestrationCompleted'), 10_000, 'the parent to complete')

      assert.deepEqual(of(parent).map((e) => e.kind), ['orchestrationStarted', 'activityFailed', 'orchestrationCompleted'])
      const [started, activityFailed] = of(parent)
      assert.equal(started.name, 'Parent')
      assert.equal(started.version, '1.0.0')
      assert.equal(started.executionId, 1)
      assert.equal(typeof started.at, 'number')
      assert.equal(activityFailed.name, 'Boom')
      assert.equal(typeof activityFailed.activityId, 'number')
      assert.equal(activityFailed.errorCategory, 'application')
      assert.match(activityFailed.error, /boom happened/)

      const child = of(`${parent}-child`)
      assert.deepEqual(child.map((e) => e.kind), ['orchestrationStarted', 'orchestrationCompleted'])
      assert.equal(child[0].parentInstanceId, parent)
      assert.equal(child[0].name, 'Child')

      assert.deepEqual(of(failing).map((e) => e.kind), ['orchestrationStarted', 'orchestrationFailed'])
      assert.match(of(failing)[1].error, /orchestration gave up/)
      assert.equal(of(failing)[1].errorCategory, 'application')

      assert.deepEqual(
        of(loop).map((e) => [e.kind, e.executionId]),
        [
          ['orchestrationStarted', 1],
          ['orchestrationContinuedAsNew', 1],
          ['orchestrationStarted', 2],
          ['orchestrationCompleted', 2],
        ],
      )
      for (const kind of KINDS) fx.runtime.off(kind, record)
    })

    test('events still come after removeAllListeners() and a new listener', async () => {
      fx.runtime.on('orchestrationFailed', record)
      fx.runtime.removeAllListeners()
      fx.runtime.on('orchestrationFailed', record)
      const id = uid('again')
      await fx.client.startOrchestration(id, 'Failing', null)
      await fx.client.waitForOrchestration(id, 30_000)
      await until(() => of(id).length === 1, 10_000, 'the failure event after removeAllListeners()')
      fx.runtime.off('orchestrationFailed', record)
    })
  })
}

describe('lifecycle listener tracking', () => {
  test('on with the first lifecycle listener, off after the last, untouched by others', () => {
    const emitter = new EventEmitter()
    const calls = []
    trackLifecycleListeners(emitter, (on) => calls.push(on))
    const a = () => {}
    const b = () => {}
    emitter.on('poisoned', a)
    assert.deepEqual(calls, [])
    emitter.on('orchestrationStarted', a)
    emitter.once('activityFailed', b)
    assert.deepEqual(calls, [true])
    emitter.off('orchestrationStarted', a)
    assert.deepEqual(calls, [true])
    emitter.emit('activityFailed', {})
    assert.deepEqual(calls, [true, false])
    assert.deepEqual([...LIFECYCLE_KINDS].sort(), [...KINDS].sort())
  })

  test('removeAllListeners() and a second tracking call leave it working, tracked once', () => {
    const emitter = new EventEmitter()
    const calls = []
    trackLifecycleListeners(emitter, (on) => calls.push(on))
    emitter.on('activityFailed', () => {})
    emitter.removeAllListeners()
    assert.deepEqual(calls, [true, false])
    trackLifecycleListeners(emitter)
    trackLifecycleListeners(emitter)
    assert.equal(emitter.listenerCount('newListener'), 1)
    assert.equal(emitter.listenerCount('removeListener'), 1)
    emitter.on('orchestrationFailed', () => {})
    assert.deepEqual(calls, [true, false, true])
  })
})
