// Generated bad calls for every Client method on both backends: each must reject with a
// TypeError or RangeError whose message starts with the argument's name, nothing may crash,
// and nothing may be written (the store is compared before and after). Deterministic: the
// random combinations come from a seeded generator (FUZZ_SEED overrides the seed).
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, FAST, uid, backends } from './helpers.mjs'

const { Runtime, Client, SteadfastError } = steadfast

const SEED = Number(process.env.FUZZ_SEED ?? 20261201)
const RANDOM_COMBOS_PER_METHOD = 12

/** mulberry32: small, deterministic PRNG. */
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const T = TypeError
const R = RangeError
const cycle = () => {
  const o = { a: 1 }
  o.self = o
  return o
}
const HUGE_PAYLOAD = 'x'.repeat(16 * 1024 * 1024) // its JSON text (with quotes) is 2 bytes over the limit

/** Values of the wrong JS type for any string argument. */
const NOT_STRINGS = [
  [null, T],
  [0, T],
  [42, T],
  [NaN, T],
  [true, T],
  [{}, T],
  [[], T],
  [Symbol('s'), T],
  [10n, T],
  [() => 'id', T],
  [new String('boxed'), T],
]

function names(maxBytes) {
  return [
    [undefined, T],
    ...NOT_STRINGS,
    ['', T],
    ['a\0b', T],
    ['\0', T],
    ['x'.repeat(maxBytes + 1), R],
    ['é'.repeat(Math.floor(maxBytes / 2) + 1), R], // 2 bytes each
  ]
}

const NOT_NUMBERS = [
  ['10', T],
  [null, T],
  [10n, T],
  [{}, T],
  [true, T],
  [[5], T],
]
const BAD_NUMBERS = [
  [NaN, R],
  [-1, R],
  [1.5, R],
  [Infinity, R],
  [-Infinity, R],
  [1e300, R],
  [-0.5, R],
]

/** Argument kinds: a valid value (used while another argument is fuzzed) and bad values. */
const KINDS = {
  instanceId: { valid: 'fuzz-absent', bad: names(1024) },
  rootInstanceId: { valid: 'fuzz-absent', bad: [...names(1024), ['sub::1', T], ['a::sub::2', T]] },
  name: { valid: 'Done', bad: names(1024) },
  version: { valid: '1.0.0', bad: [...names(1024), ['1.0', T], ['v1.0.0', T], ['1.0.0 ', T]] },
  reason: {
    valid: 'r',
    bad: [...NOT_STRINGS, ['a\0', T], ['x'.repeat(64 * 1024 + 1), R]],
  },
  json: {
    valid: { ok: 1 },
    bad: [
      [10n, T],
      [{ a: 1n }, T],
      [[1, 2n], T],
      [cycle(), T],
      [() => 1, T],
      [{ f() {} }, T],
      [Symbol('s'), T],
      [{ s: Symbol('s') }, T],
      [NaN, T],
      [Infinity, T],
      [{ n: -Infinity }, T],
      [[NaN], T],
      [{ toJSON() { throw new Error('toJSON exploded') } }, T],
      [HUGE_PAYLOAD, R],
    ],
  },
  timeoutMs: { valid: 10, bad: [...NOT_NUMBERS, ...BAD_NUMBERS, [2 ** 32, R]] },
  intervalMs: { valid: 5, bad: [...NOT_NUMBERS, ...BAD_NUMBERS, [0, R], [2 ** 32, R]] },
  version0: { valid: 0, bad: [[undefined, T], ...NOT_NUMBERS, ...BAD_NUMBERS, [2 ** 53, R]] },
  executionId: { valid: 1, bad: [[undefined, T], ...NOT_NUMBERS, ...BAD_NUMBERS, [0, R], [2 ** 53, R]] },
  force: { valid: false, bad: [['true', T], [1, T], [null, T], [{}, T]] },
  status: {
    valid: 'Running',
    bad: [[undefined, T], ['completed', T], ['Running ', T], ['', T], [1, T], [null, T], ['x'.repeat(5000), T]],
  },
  filter: {
    valid: { instanceIds: ['fuzz-absent'] },
    bad: [
      [null, T],
      ['all', T],
      [[], T],
      [5, T],
      [{ instanceId: ['a'] }, T],
      [{ instanceIds: 'a' }, T],
      [{ instanceIds: [1] }, T],
      [{ instanceIds: [''] }, T],
      [{ instanceIds: ['ok', 'a\0'] }, T],
      [{ instanceIds: ['x'.repeat(1025)] }, R],
      [{ instanceIds: Array(10_001).fill('a') }, R],
      [{ limit: 0 }, R],
      [{ limit: 10_001 }, R],
      [{ limit: '5' }, T],
      [{ limit: NaN }, R],
      [{ limit: 1.5 }, R],
      [{ completedBefore: -1 }, R],
      [{ completedBefore: 2 ** 53 }, R],
      [{ completedBefore: 5n }, T],
      [{ completedBefore: null }, T],
    ],
  },
  prune: {
    valid: {},
    bad: [
      [null, T],
      ['x', T],
      [[], T],
      [{ keep: 1 }, T],
      [{ keepLast: -1 }, R],
      [{ keepLast: 1.5 }, R],
      [{ keepLast: '1' }, T],
      [{ keepLast: 2 ** 32 }, R],
      [{ keepLast: NaN }, R],
      [{ completedBefore: -5 }, R],
      [{ completedBefore: Infinity }, R],
    ],
  },
  start: {
    valid: { ifExists: 'ignore' },
    bad: [
      [null, T],
      ['throw', T],
      [[], T],
      [{ ifExists: 'fail' }, T],
      [{ ifExists: 'Throw' }, T],
      [{ ifExists: true }, T],
      [{ ifExists: null }, T],
      [{ ifexists: 'throw' }, T],
      [{ ifExists: 'throw', extra: 1 }, T],
    ],
  },
  deadLetterId: { valid: 1, bad: [[undefined, T], ['1', T], [null, T], [0, R], [-1, R], [1.5, R], [NaN, R], [2 ** 53, R]] },
  deadLetterList: {
    valid: {},
    bad: [
      [null, T],
      ['x', T],
      [{ limit: 0 }, R],
      [{ limit: 10_001 }, R],
      [{ afterId: -1 }, R],
      [{ instanceId: '' }, T],
      [{ instanceId: 'a\0' }, T],
      [{ instanceId: 'x'.repeat(1025) }, R],
      [{ deadBeforeMs: 1 }, T],
    ],
  },
  deadLetterPurge: {
    valid: { instanceId: 'fuzz-absent' },
    bad: [
      [null, T],
      [{ deadBeforeMs: -1 }, R],
      [{ deadBeforeMs: 'now' }, T],
      [{ instanceId: 5 }, T],
      [{ instanceId: 'a\0' }, T],
      [{ limit: 5 }, T],
    ],
  },
}

const arg = (name, kind) => ({ name, kind })
const id = arg('instanceId', 'instanceId')

/** Every Client method and its arguments, in order. */
const METHODS = {
  startOrchestration: [arg('instanceId', 'rootInstanceId'), arg('orchestrationName', 'name'), arg('input', 'json'), arg('options', 'start')],
  startOrchestrationTyped: [arg('instanceId', 'rootInstanceId'), arg('orchestrationName', 'name'), arg('input', 'json'), arg('options', 'start')],
  startOrchestrationVersioned: [arg('instanceId', 'rootInstanceId'), arg('orchestrationName', 'name'), arg('input', 'json'), arg('version', 'version'), arg('options', 'start')],
  startOrchestrationVersionedTyped: [arg('instanceId', 'rootInstanceId'), arg('orchestrationName', 'name'), arg('input', 'json'), arg('version', 'version'), arg('options', 'start')],
  getStatus: [id],
  waitForOrchestration: [id, arg('timeoutMs', 'timeoutMs')],
  waitForOrchestrationTyped: [id, arg('timeoutMs', 'timeoutMs')],
  waitForStatusChange: [id, arg('lastSeenVersion', 'version0'), arg('pollIntervalMs', 'intervalMs'), arg('timeoutMs', 'timeoutMs')],
  raiseEvent: [id, arg('eventName', 'name'), arg('data', 'json')],
  raiseEventTyped: [id, arg('eventName', 'name'), arg('data', 'json')],
  enqueueEvent: [id, arg('queueName', 'name'), arg('data', 'json')],
  enqueueEventTyped: [id, arg('queueName', 'name'), arg('data', 'json')],
  cancelInstance: [id, arg('reason', 'reason')],
  getValue: [id, arg('key', 'name')],
  waitForValue: [id, arg('key', 'name'), arg('timeoutMs', 'timeoutMs')],
  getKvAllValues: [id],
  getOrchestrationStats: [id],
  listInstancesByStatus: [arg('status', 'status')],
  getInstanceInfo: [id],
  listExecutions: [id],
  getExecutionInfo: [id, arg('executionId', 'executionId')],
  readExecutionHistory: [id, arg('executionId', 'executionId')],
  getInstanceTree: [id],
  deleteInstance: [id, arg('force', 'force')],
  deleteInstanceBulk: [arg('filter', 'filter')],
  pruneExecutions: [id, arg('options', 'prune')],
  pruneExecutionsBulk: [arg('filter', 'filter'), arg('options', 'prune')],
  listDeadLetters: [arg('options', 'deadLetterList')],
  getDeadLetter: [arg('id', 'deadLetterId')],
  requeueDeadLetter: [arg('id', 'deadLetterId')],
  purgeDeadLetters: [arg('options', 'deadLetterPurge')],
}

/** Every call to make: one per (argument, bad value), then seeded random combinations. */
function generateCalls() {
  const calls = []
  for (const [method, params] of Object.entries(METHODS)) {
    const valid = params.map((p) => KINDS[p.kind].valid)
    params.forEach((p, i) => {
      for (const [value, cls] of KINDS[p.kind].bad) {
        const args = [...valid]
        args[i] = value
        calls.push({ method, args, expect: { name: p.name, cls } })
      }
    })
  }
  const random = prng(SEED)
  const pick = (list) => list[Math.floor(random() * list.length)]
  for (const [method, params] of Object.entries(METHODS)) {
    for (let n = 0; n < RANDOM_COMBOS_PER_METHOD; n++) {
      const args = params.map((p) => KINDS[p.kind].valid)
      let first
      for (let i = 0; i < params.length; i++) {
        if (random() < 0.5 || (first === undefined && i === params.length - 1)) {
          const [value, cls] = pick(KINDS[params[i].kind].bad)
          args[i] = value
          first ??= { name: params[i].name, cls }
        }
      }
      // Validation runs in argument order, so the first bad argument is the one reported.
      calls.push({ method, args, expect: first })
    }
  }
  return calls
}

const CALLS = generateCalls()

function describeArgs(args) {
  return args
    .map((a) => {
      if (typeof a === 'string') return a.length > 30 ? `'${a.slice(0, 10)}…'(${a.length})` : JSON.stringify(a)
      if (typeof a === 'bigint') return `${a}n`
      if (typeof a === 'symbol' || typeof a === 'function') return String(a)
      try {
        const s = JSON.stringify(a)
        return s && s.length > 40 ? `${s.slice(0, 40)}…` : String(s)
      } catch {
        return Object.prototype.toString.call(a)
      }
    })
    .join(', ')
}

async function snapshot(client, kind) {
  return {
    instances: (await client.listAllInstances()).sort(),
    depths: await client.getQueueDepths(),
    metrics: await client.getSystemMetrics(),
    seedKv: await client.getKvAllValues('fuzz-done-1'),
    deadLetters: kind === 'postgres' ? (await client.listDeadLetters()).length : null,
  }
}

for (const backend of backends('fuzz')) {
  describe(`client argument fuzzing on ${backend.name}`, { timeout: 240_000 }, () => {
    let env
    let client

    before(async () => {
      env = await backend.open()
      // Some state worth protecting: completed instances with history and KV, one queued start.
      const rt = new Runtime(env.provider, FAST)
      rt.registerOrchestration('Done', function* (ctx, n) {
        ctx.setValue('n', String(n))
        return n
      })
      await rt.start()
      client = new Client(env.provider)
      for (const n of [1, 2]) {
        await client.startOrchestration(`fuzz-done-${n}`, 'Done', n)
        assert.equal((await client.waitForOrchestration(`fuzz-done-${n}`, 60_000)).status, 'Completed')
      }
      await rt.shutdown(2000)
      await client.startOrchestration(uid('fuzz-queued'), 'Done', 3)
    })

    after(async () => {
      await env?.cleanup()
    })

    test(`${CALLS.length} bad calls reject with a TypeError/RangeError naming the argument; nothing is written`, async () => {
      const beforeState = await snapshot(client, env.provider.kind)
      assert.equal(beforeState.instances.length, 2)
      assert.equal(beforeState.depths.orchestratorQueue, 1)
      const byMethod = {}
      for (const { method, args, expect } of CALLS) {
        const label = `${method}(${describeArgs(args)})`
        let error
        try {
          await client[method](...args)
        } catch (e) {
          error = e
        }
        assert.ok(error, `${label} resolved`)
        assert.ok(!(error instanceof SteadfastError), `${label} reached the native layer: ${error.code} ${error.message}`)
        assert.ok(error instanceof expect.cls, `${label}: expected ${expect.cls.name}, got ${error.name}: ${error.message}`)
        assert.ok(error.message.startsWith(expect.name), `${label}: message should start with "${expect.name}": ${error.message}`)
        assert.match(error.code, /^ERR_(INVALID_ARG_TYPE|INVALID_ARG_VALUE|OUT_OF_RANGE)$/, label)
        assert.ok(error.message.length < 400, `${label}: message too long (${error.message.length})`)
        byMethod[method] = (byMethod[method] ?? 0) + 1
      }
      assert.deepEqual(Object.keys(byMethod).sort(), Object.keys(METHODS).sort())
      assert.deepEqual(await snapshot(client, env.provider.kind), beforeState)
    })

    test('the client constructor rejects anything but a provider', () => {
      for (const bad of [undefined, null, {}, 'sqlite', { _native: {} }, env.provider._native]) {
        assert.throws(() => new Client(bad), (e) => e instanceof TypeError && /^provider must be/.test(e.message))
      }
    })

    test('valid edge values are accepted', async () => {
      // The limits themselves are fine: max-length ids, zero timeouts, empty reason.
      const long = 'é'.repeat(512) // 1024 bytes
      assert.equal((await client.getStatus(long)).status, 'NotFound')
      await assert.rejects(client.waitForOrchestration('fuzz-absent', 0), { code: 'ERR_STEADFAST_TIMEOUT' })
      assert.deepEqual(await client.listExecutions('with::colons and spaces'), [])
      assert.deepEqual(await client.deleteInstanceBulk({ instanceIds: [], limit: 10_000 }), {
        instancesDeleted: 0,
        executionsDeleted: 0,
        eventsDeleted: 0,
        queueMessagesDeleted: 0,
      })
      assert.equal((await client.pruneExecutions('fuzz-done-1', { keepLast: 0, completedBefore: 0 })).executionsDeleted, 0)
      assert.equal((await client.getStatus('fuzz-done-1')).output, 1)
    })
  })
}
