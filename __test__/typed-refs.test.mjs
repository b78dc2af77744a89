// Typed references (defineActivity, defineOrchestration, defineOrchestrationVersioned) end to
// end on SQLite and PostgreSQL: registered, scheduled, started and waited for by reference,
// tasks taken with `yield*` beside plain `yield` (results, failures, all/race), versions pinned
// by versioned references; and the bad cases: look-alike objects, references of the other kind,
// invalid names, a version that contradicts its reference, a wait told the wrong orchestration.
// duroxide-node's *Typed and *Versioned names take references as their plain counterparts do.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, backends, runtimeOn, thrown } from './helpers.mjs'

const { Runtime, SqliteProvider, defineActivity, defineOrchestration, defineOrchestrationVersioned } = steadfast

const add = defineActivity('RefAdd', async (_ctx, { a, b }) => a + b)
const stamp = defineActivity('RefStamp', async (ctx) => ctx.activityName)
const fails = defineActivity('RefFails', async () => {
  throw new RangeError('out of stock')
})

const childV1 = defineOrchestrationVersioned('RefChild', '1.0.0', function* (ctx, n) {
  return { n, version: ctx.orchestrationVersion }
})
const childV2 = defineOrchestrationVersioned('RefChild', '2.0.0', function* (ctx, n) {
  return { n: n * 10, version: ctx.orchestrationVersion }
})
// Never registered: an unversioned reference stands for its name, so it runs the latest version.
const childByName = defineOrchestration('RefChild', function* () {
  return null
})

const parent = defineOrchestration('RefParent', function* (ctx, { a, b, detachedId }) {
  const sum = yield* ctx.scheduleActivity(add, { a, b })
  const plain = yield ctx.scheduleActivity(add, { a: sum, b: 1 })
  const retried = yield* ctx.scheduleActivityWithRetry(add, { a: 1, b: 1 }, { maxAttempts: 2, backoff: 'none' })
  const stamped = yield* ctx.scheduleActivity(stamp)
  let failure = null
  try {
    yield* ctx.scheduleActivity(fails)
  } catch (e) {
    failure = { name: e.name, message: e.message }
  }
  const latest = yield* ctx.scheduleSubOrchestration(childByName, 1)
  const pinned = yield* ctx.scheduleSubOrchestration(childV1, 2)
  const withId = yield* ctx.scheduleSubOrchestrationWithId(childV1, `${ctx.instanceId}-kid`, 3)
  const joined = yield* ctx.all([ctx.scheduleActivity(add, { a: 2, b: 2 }), ctx.scheduleTimer(1)])
  const raced = yield* ctx.race(ctx.scheduleActivity(add, { a: 3, b: 3 }), ctx.scheduleTimer(60_000))
  const detached = yield* ctx.startOrchestration(childV1, detachedId, 4)
  return { sum, plain, retried, stamped, failure, latest, pinned, withId, joined, raced, detached }
})

const jsonText = defineActivity('RefJsonText', async () => JSON.stringify({ a: 1 }))
// Registered as 1.0.0 by (reference, version) and as 2.0.0 by a versioned reference alone.
const twin = defineOrchestration('RefTwin', function* (ctx, n) {
  return { n, version: ctx.orchestrationVersion }
})
const twinV2 = defineOrchestrationVersioned('RefTwin', '2.0.0', function* (ctx, n) {
  return { n: -n, version: ctx.orchestrationVersion }
})

// Every *Typed and *Versioned context method given a reference.
const aliases = defineOrchestration('RefAliases', function* (ctx, { detachedIds }) {
  const session = 'ref-session'
  return {
    typed: yield* ctx.scheduleActivityTyped(jsonText),
    plain: yield* ctx.scheduleActivity(jsonText),
    tagged: yield* ctx.scheduleActivityTyped(add, { a: 1, b: 1 }, {}),
    onSession: yield* ctx.scheduleActivityOnSessionTyped(add, { a: 1, b: 2 }, session),
    retried: yield* ctx.scheduleActivityWithRetryTyped(jsonText, undefined, { maxAttempts: 2 }),
    retriedOnSession: yield* ctx.scheduleActivityWithRetryOnSessionTyped(add, { a: 2, b: 2 }, { maxAttempts: 2 }, session),
    child: yield* ctx.scheduleSubOrchestrationTyped(childV1, 1),
    childWithId: yield* ctx.scheduleSubOrchestrationWithIdTyped(childByName, `${ctx.instanceId}-a`, 2),
    versioned: yield* ctx.scheduleSubOrchestrationVersioned(childByName, '1.0.0', 3),
    versionedWithId: yield* ctx.scheduleSubOrchestrationVersionedWithId(twin, '1.0.0', `${ctx.instanceId}-b`, 4),
    detached: [
      yield* ctx.startOrchestrationVersioned(twin, '2.0.0', detachedIds[0], 5),
      yield* ctx.startOrchestrationTyped(twinV2, detachedIds[1], 6),
      yield* ctx.startOrchestrationVersionedTyped(childV1, '1.0.0', detachedIds[2], 7),
    ],
  }
})

// The checks a context makes on references; each call throws before anything is scheduled.
const misuse = defineOrchestration('RefMisuse', function* (ctx) {
  return {
    lookAlike: thrown(() => ctx.scheduleActivity({ ...add }, { a: 1, b: 1 })),
    orchestrationAsActivity: thrown(() => ctx.scheduleActivity(childV1, 1)),
    activityAsChild: thrown(() => ctx.scheduleSubOrchestration(add, 1)),
    otherVersion: thrown(() => ctx.scheduleSubOrchestrationVersioned(childV1, '2.0.0', 1)),
    otherVersionOption: thrown(() => ctx.scheduleSubOrchestration(childV1, 1, { version: '2.0.0' })),
    activityDetached: thrown(() => ctx.startOrchestration(add, 'x', 1)),
    otherVersionWithId: thrown(() => ctx.scheduleSubOrchestrationVersionedWithId(twinV2, '1.0.0', 'x', 1)),
    otherVersionDetached: thrown(() => ctx.startOrchestrationVersionedTyped(childV1, '2.0.0', 'x', 1)),
    activityAsTypedChild: thrown(() => ctx.scheduleSubOrchestrationWithIdTyped(add, 'x', 1)),
    orchestrationAsTypedActivity: thrown(() => ctx.scheduleActivityWithRetryTyped(childV1, 1, { maxAttempts: 1 })),
  }
})

function register(rt) {
  rt.registerActivity(add).registerActivity(stamp).registerActivity(fails)
  rt.registerOrchestration(childV1).registerOrchestration(childV2).registerOrchestration(parent).registerOrchestration(misuse)
  rt.registerActivityTyped(jsonText).registerOrchestrationTyped(aliases)
  rt.registerOrchestrationVersioned(twin, '1.0.0').registerOrchestrationVersionedTyped(twinV2)
}

test('define*() check their arguments and make frozen references', () => {
  const generator = function* () {}
  const cases = [
    [() => defineActivity('', async () => 1), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be a non-empty string \(got string ""\)$/],
    [() => defineActivity(7, async () => 1), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be a non-empty string \(got number 7\)$/],
    [() => defineActivity('a\0b', async () => 1), TypeError, 'ERR_INVALID_ARG_VALUE', /^name must not contain NUL characters \(found one at index 1\)$/],
    [() => defineActivity('x'.repeat(1025), async () => 1), RangeError, 'ERR_OUT_OF_RANGE', /^name must be at most 1024 bytes as UTF-8 \(got 1025\)$/],
    [() => defineActivity('A', 'fn'), TypeError, 'ERR_INVALID_ARG_TYPE', /^fn must be a function \(got string "fn"\)$/],
    [() => defineOrchestration('', generator), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be a non-empty string/],
    [() => defineOrchestration('O', async () => 1), TypeError, 'ERR_INVALID_ARG_TYPE', /^fn must be a generator function\* \(got function\)$/],
    [() => defineOrchestrationVersioned('O', '1.0', generator), TypeError, 'ERR_INVALID_ARG_VALUE', /^version must be a semantic version like "1\.2\.0" \(got "1\.0"\)$/],
    [() => defineOrchestrationVersioned('O', undefined, generator), TypeError, 'ERR_INVALID_ARG_TYPE', /^version must be a non-empty string/],
  ]
  for (const [call, cls, code, message] of cases) {
    assert.throws(call, (e) => e instanceof cls && e.code === code && message.test(e.message), String(call))
  }

  assert.deepEqual({ ...add }, { kind: 'activity', name: 'RefAdd', fn: add.fn })
  assert.deepEqual({ ...childV2 }, { kind: 'orchestration', name: 'RefChild', version: '2.0.0', fn: childV2.fn })
  assert.equal('version' in childByName, false)
  assert.ok(Object.isFrozen(add) && Object.isFrozen(childV1))
  assert.throws(() => {
    add.name = 'Other'
  }, TypeError)
})

test('a Runtime registers references by their kind, and only references', async () => {
  const rt = new Runtime(await SqliteProvider.inMemory(), FAST)
  const rejects = (call, cls, code, message) => assert.throws(call, (e) => e instanceof cls && e.code === code && message.test(e.message))
  rejects(() => rt.registerOrchestration(add), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be an orchestration name or reference \(got a reference to activity "RefAdd"\)$/)
  rejects(() => rt.registerActivity(childV1), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be an activity name or reference \(got a reference to orchestration "RefChild"\)$/)
  rejects(() => rt.registerActivity(add, add.fn), TypeError, 'ERR_INVALID_ARG_VALUE', /^fn must be left out when registering a reference: the reference carries its function$/)
  rejects(() => rt.registerActivity({ ...add }), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be a non-empty string \(got object\)$/)
  rt.registerActivity(add).registerOrchestration(childV1).registerOrchestration(childV2)
  rejects(() => rt.registerActivity(add), TypeError, 'ERR_INVALID_ARG_VALUE', /^name must be unique: activity "RefAdd" is already registered$/)
  rejects(() => rt.registerOrchestration(childV2), TypeError, 'ERR_INVALID_ARG_VALUE', /version 2\.0\.0 is already registered$/)
  rejects(() => rt.registerOrchestrationVersioned(childByName), TypeError, 'ERR_INVALID_ARG_TYPE', /^version must be a non-empty string \(got undefined\)$/)
  rejects(() => rt.registerOrchestrationVersioned(twinV2, '3.0.0'), TypeError, 'ERR_INVALID_ARG_VALUE', /^version must be 2\.0\.0, the version of the reference to "RefTwin" \(got 3\.0\.0\)$/)
  rejects(() => rt.registerOrchestrationVersionedTyped(add, '1.0.0'), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be an orchestration name or reference \(got a reference to activity "RefAdd"\)$/)
  rejects(() => rt.registerOrchestrationVersioned(twin, '1.0.0', twin.fn), TypeError, 'ERR_INVALID_ARG_VALUE', /^fn must be left out when registering a reference/)
  rejects(() => rt.registerActivityTyped(childV1), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be an activity name or reference/)
  rejects(() => rt.registerOrchestrationTyped(add), TypeError, 'ERR_INVALID_ARG_TYPE', /^name must be an orchestration name or reference/)
  rt.registerOrchestrationVersioned(twinV2, '2.0.0').registerOrchestrationVersionedTyped(twin, '1.0.0')
  rejects(() => rt.registerOrchestrationVersioned(twin, '2.0.0'), TypeError, 'ERR_INVALID_ARG_VALUE', /version 2\.0\.0 is already registered$/)
  // The name form still registers beside references.
  rt.registerOrchestration('RefByName', function* () {
    return 1
  })
})

for (const backend of backends('typed_refs')) {
  describe(`typed references on ${backend.name}`, () => {
    const fx = runtimeOn(backend, FAST, register)

    test('registered, scheduled, started and waited for by reference; yield* and yield alike', async () => {
      const id = uid('ref-parent')
      const detachedId = uid('ref-detached')
      await fx.client.startOrchestration(id, parent, { a: 1, b: 2, detachedId })
      const out = await fx.client.waitForOrchestrationTyped(id, 30_000, { orchestration: parent })
      assert.deepEqual(out, {
        sum: 3,
        plain: 4,
        retried: 2,
        stamped: 'RefStamp',
        failure: { name: 'RangeError', message: 'out of stock' },
        latest: { n: 10, version: '2.0.0' },
        pinned: { n: 2, version: '1.0.0' },
        withId: { n: 3, version: '1.0.0' },
        joined: [{ ok: 4 }, { ok: null }],
        raced: { index: 0, value: 6 },
        detached: null,
      })
      const status = await fx.client.waitForOrchestration(detachedId, 30_000, { orchestration: childV1 })
      assert.equal(status.status, 'Completed')
      assert.deepEqual(status.output, { n: 4, version: '1.0.0' })
      assert.equal((await fx.client.getInstanceInfo(`${id}-kid`)).orchestrationVersion, '1.0.0')
    })

    test('a versioned reference starts its version; an unversioned one the latest', async () => {
      const pinned = uid('ref-v1')
      const latest = uid('ref-latest')
      await fx.client.startOrchestration(pinned, childV1, 5)
      await fx.client.startOrchestration(latest, childByName, 5)
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(pinned, 30_000, { orchestration: childV1 }), { n: 5, version: '1.0.0' })
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(latest, 30_000, { orchestration: childByName }), { n: 50, version: '2.0.0' })
      const same = uid('ref-same')
      await fx.client.startOrchestrationVersioned(same, childV2, 6, '2.0.0')
      assert.deepEqual((await fx.client.waitForOrchestration(same, 30_000)).output, { n: 60, version: '2.0.0' })
    })

    test('the *Typed and *Versioned names take references: registered, scheduled and started by them', async () => {
      const id = uid('ref-aliases')
      const detachedIds = [uid('ref-d0'), uid('ref-d1'), uid('ref-d2')]
      await fx.client.startOrchestrationTyped(id, aliases, { detachedIds })
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(id, 30_000, { orchestration: aliases }), {
        typed: { a: 1 },
        plain: '{"a":1}',
        tagged: 2,
        onSession: 3,
        retried: { a: 1 },
        retriedOnSession: 4,
        child: { n: 1, version: '1.0.0' },
        childWithId: { n: 20, version: '2.0.0' },
        versioned: { n: 3, version: '1.0.0' },
        versionedWithId: { n: 4, version: '1.0.0' },
        detached: [null, null, null],
      })
      const expected = [
        { n: -5, version: '2.0.0' },
        { n: -6, version: '2.0.0' },
        { n: 7, version: '1.0.0' },
      ]
      for (const [i, detachedId] of detachedIds.entries()) {
        assert.deepEqual((await fx.client.waitForOrchestration(detachedId, 30_000)).output, expected[i])
      }
      const pinned = uid('ref-twin')
      const latest = uid('ref-twin')
      await fx.client.startOrchestrationVersionedTyped(pinned, twin, 8, '1.0.0')
      await fx.client.startOrchestrationTyped(latest, twin, 9)
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(pinned, 30_000, { orchestration: twin }), { n: 8, version: '1.0.0' })
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(latest, 30_000, { orchestration: twin }), { n: -9, version: '2.0.0' })
      await assert.rejects(
        fx.client.startOrchestrationVersionedTyped(uid('ref-twin'), twinV2, 1, '1.0.0'),
        (e) => e instanceof TypeError && /^version must be 2\.0\.0, the version of the reference to "RefTwin" \(got 1\.0\.0\)$/.test(e.message),
      )
      await assert.rejects(
        fx.client.startOrchestrationTyped(uid('ref-twin'), add, 1),
        (e) => e instanceof TypeError && /^orchestrationName must be an orchestration name or reference/.test(e.message),
      )
    })

    test('a context rejects look-alikes, the other kind and another version', async () => {
      const id = uid('ref-misuse')
      await fx.client.startOrchestration(id, misuse)
      const out = await fx.client.waitForOrchestrationTyped(id, 30_000)
      const typeError = (code, message) => ({ name: 'TypeError', code, message })
      assert.deepEqual(out, {
        lookAlike: typeError('ERR_INVALID_ARG_TYPE', 'name must be a non-empty string or a reference made by defineActivity() (got object)'),
        orchestrationAsActivity: typeError('ERR_INVALID_ARG_TYPE', 'name must be an activity name or reference (got a reference to orchestration "RefChild")'),
        activityAsChild: typeError('ERR_INVALID_ARG_TYPE', 'name must be an orchestration name or reference (got a reference to activity "RefAdd")'),
        otherVersion: typeError('ERR_INVALID_ARG_VALUE', 'version must be 1.0.0, the version of the reference to "RefChild" (got 2.0.0)'),
        otherVersionOption: typeError('ERR_INVALID_ARG_VALUE', 'options.version must be 1.0.0, the version of the reference to "RefChild" (got 2.0.0)'),
        activityDetached: typeError('ERR_INVALID_ARG_TYPE', 'name must be an orchestration name or reference (got a reference to activity "RefAdd")'),
        otherVersionWithId: typeError('ERR_INVALID_ARG_VALUE', 'version must be 2.0.0, the version of the reference to "RefTwin" (got 1.0.0)'),
        otherVersionDetached: typeError('ERR_INVALID_ARG_VALUE', 'version must be 1.0.0, the version of the reference to "RefChild" (got 2.0.0)'),
        activityAsTypedChild: typeError('ERR_INVALID_ARG_TYPE', 'name must be an orchestration name or reference (got a reference to activity "RefAdd")'),
        orchestrationAsTypedActivity: typeError('ERR_INVALID_ARG_TYPE', 'name must be an activity name or reference (got a reference to orchestration "RefChild")'),
      })
    })

    test('a client rejects bad references before writing anything, and a wait told the wrong orchestration', async () => {
      const id = uid('ref-bad')
      const rejects = (promise, cls, code, message) => assert.rejects(promise, (e) => e instanceof cls && e.code === code && message.test(e.message))
      await rejects(
        fx.client.startOrchestration(id, { kind: 'orchestration', name: 'RefParent', fn: parent.fn }, {}),
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /^orchestrationName must be a non-empty string or a reference made by defineOrchestration\(\) \(got object\)$/,
      )
      await rejects(
        fx.client.startOrchestration(id, add, { a: 1, b: 1 }),
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /^orchestrationName must be an orchestration name or reference \(got a reference to activity "RefAdd"\)$/,
      )
      await rejects(
        fx.client.startOrchestrationVersioned(id, childV1, 1, '2.0.0'),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        /^version must be 1\.0\.0, the version of the reference to "RefChild" \(got 2\.0\.0\)$/,
      )
      await rejects(fx.client.startOrchestration(id, childV1, 10n), TypeError, 'ERR_INVALID_ARG_VALUE', /^input must be JSON-serializable: input is a BigInt/)
      await rejects(
        fx.client.waitForOrchestration(id, 10, { orchestration: add }),
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /^options\.orchestration must be an orchestration reference \(got a reference to activity "RefAdd"\)$/,
      )
      await rejects(
        fx.client.waitForOrchestrationTyped(id, 10, { orchestration: 'RefChild' }),
        TypeError,
        'ERR_INVALID_ARG_TYPE',
        /^options\.orchestration must be a reference made by defineOrchestration\(\) \(got string "RefChild"\)$/,
      )
      await rejects(fx.client.waitForOrchestration(id, 10, { orchestraton: childV1 }), TypeError, 'ERR_INVALID_ARG_VALUE', /^options\.orchestraton is not a known option \(did you mean "orchestration"\?\)$/)
      assert.equal((await fx.client.getStatus(id)).status, 'NotFound')

      await fx.client.startOrchestration(id, childV2, 1)
      await rejects(
        fx.client.waitForOrchestration(id, 30_000, { orchestration: parent }),
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        new RegExp(`^options\\.orchestration must be a reference to "RefChild", the orchestration instance "${id}" runs \\(got a reference to "RefParent"\\)$`),
      )
      assert.deepEqual(await fx.client.waitForOrchestrationTyped(id, 30_000, { orchestration: childByName }), { n: 10, version: '2.0.0' })
    })
  })
}
