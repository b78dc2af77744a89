// Payload fuzzing on SQLite and PostgreSQL: orchestration inputs, event data, activity
// results, orchestration outputs, custom status and KV values that JSON cannot carry
// (BigInt, cycles, functions, symbols, NaN), oversized payloads (MAX_PAYLOAD_BYTES,
// checked in JS before Rust), lone surrogates and NUL, and invalid instance ids. Each gets
// a clear TypeError/RangeError, the process keeps running, and nothing is written.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { steadfast, FAST, DATABASE_URL, uid, backends } from './helpers.mjs'
import { SEED, rng } from './fuzz-support.mjs'

const require = createRequire(import.meta.url)
const { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH, encode } = require('../lib/json.js')
const { MAX_CUSTOM_STATUS_BYTES, MAX_KV_VALUE_BYTES } = require('../lib/limits.js')
const { Runtime, Client } = steadfast

const MiB = 1024 * 1024

/** `leaf` inside `depth` arrays. */
function nestedArrays(depth, leaf = 'leaf') {
  let v = leaf
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

function cyclic() {
  const o = { a: 1 }
  o.self = { back: o }
  return o
}

/** [label, value, ErrorClass, message pattern] — each must be refused. */
function badPayloads() {
  const nested = (leaf) => ({ list: [1, { deep: leaf }] })
  return [
    ['BigInt', 10n, TypeError, /is a BigInt/],
    ['nested BigInt', nested(1n), TypeError, /\.list\[1\]\.deep is a BigInt/],
    ['cycle', cyclic(), TypeError, /circular reference/],
    ['function', () => 1, TypeError, /must be JSON-serializable/],
    ['nested function', nested(() => 1), TypeError, /\.deep is a function/],
    ['symbol', Symbol('s'), TypeError, /must be JSON-serializable/],
    ['nested symbol', nested(Symbol('s')), TypeError, /\.deep is a symbol/],
    ['NaN', NaN, TypeError, /is NaN/],
    ['nested Infinity', nested(-Infinity), TypeError, /is -Infinity/],
    ['lone high surrogate', 'a\ud800b', TypeError, /lone surrogate/],
    ['lone low surrogate in a key', { ['k\udc00']: 1 }, TypeError, /a key is not well-formed/],
    ['throwing toJSON', { toJSON() { throw new Error('toJSON boom') } }, TypeError, /could not be serialized: toJSON boom/],
    ['throwing getter', { get x() { throw new Error('getter boom') } }, TypeError, /could not be serialized: getter boom/],
    ['oversized', 'x'.repeat(MAX_PAYLOAD_BYTES), RangeError, new RegExp(`must be at most ${MAX_PAYLOAD_BYTES} bytes as JSON \\(got ${MAX_PAYLOAD_BYTES + 2}\\)`)],
    ['too deep', { a: nestedArrays(MAX_PAYLOAD_DEPTH) }, RangeError, /must be nested at most 100 levels deep/],
    ['far too deep', nestedArrays(100_000), RangeError, /must be nested at most 100 levels deep/],
    ['oversized multibyte', 'é'.repeat(MAX_PAYLOAD_BYTES / 2), RangeError, /must be at most 16777216 bytes/],
  ]
}

/** Valid but unusual payloads that must round-trip exactly. */
function edgePayloads() {
  return [
    ['emoji and surrogate pairs', { s: '😀 𝄞 \u{10FFFF}', k: { '🔑': 'v' } }],
    ['NUL inside a JSON string', { s: 'a\0b\u0001c' }],
    ['control and quote characters', '"\\\n\r\t\u2028\u2029'],
    [`${MAX_PAYLOAD_DEPTH} levels of nesting (the limit)`, nestedArrays(MAX_PAYLOAD_DEPTH)],
    ['the limit inside objects', { a: { b: nestedArrays(MAX_PAYLOAD_DEPTH - 2) } }],
    ['1 MiB string', 'z'.repeat(MiB)],
    ['numbers at the edges', [Number.MAX_SAFE_INTEGER, -0, 5e-324, 1.7976931348623157e308]],
    ['null', null],
    ['empty string', ''],
  ]
}

test('encode(): the size limit is exactly MAX_PAYLOAD_BYTES of UTF-8 JSON text', () => {
  assert.equal(MAX_PAYLOAD_BYTES, 16 * MiB)
  assert.equal(encode('x'.repeat(MAX_PAYLOAD_BYTES - 2), 'input').length, MAX_PAYLOAD_BYTES)
  assert.throws(() => encode('x'.repeat(MAX_PAYLOAD_BYTES - 1), 'input'), RangeError)
  // Multi-byte characters count as bytes, not UTF-16 units.
  assert.throws(() => encode('€'.repeat(MAX_PAYLOAD_BYTES / 3), 'input'), RangeError)
  // JSON semantics kept where they lose nothing a user means: undefined properties are dropped.
  assert.equal(encode({ a: undefined, b: 1 }, 'input'), '{"b":1}')
  assert.equal(encode(undefined, 'input'), 'null')
})

test(`encode(): generated values (seed ${SEED}) are refused exactly when they hold something JSON cannot carry`, () => {
  const r = rng(SEED + 10)
  const leaves = [
    [1, true], ['s', true], [null, true], [true, true], [undefined, true], [-0, true],
    [1n, false], [NaN, false], [Infinity, false], [() => 0, false], [Symbol('x'), false], ['\udfff', false], ['ok\ud83d', false],
  ]
  let refused = 0
  for (let n = 0; n < 300; n++) {
    let valid = true
    const build = (depth) => {
      if (depth > 3 || r.chance(0.3)) {
        const [leaf, ok] = r.pick(leaves)
        // undefined directly in an array becomes null; in an object it is dropped: both valid.
        valid &&= ok
        return leaf
      }
      if (r.chance(0.5)) return Array.from({ length: r.int(0, 3) }, () => build(depth + 1))
      const o = {}
      for (let i = r.int(0, 3); i > 0; i--) o[`k${i}`] = build(depth + 1)
      return o
    }
    const value = { root: build(0) }
    if (valid) {
      assert.deepEqual(JSON.parse(encode(value, 'input')), JSON.parse(JSON.stringify(value)), `case ${n}`)
    } else {
      assert.throws(() => encode(value, 'input'), (e) => e instanceof TypeError && /^input must be JSON-serializable: input\.root/.test(e.message), `case ${n}`)
      refused++
    }
  }
  assert.ok(refused > 30 && refused < 270, `refused ${refused} of 300`)
})

for (const backend of backends('payload')) {
  describe(`payloads on ${backend.name}`, () => {
    let env
    let rt
    let client
    const badResults = new Map(badPayloads().map(([label, value]) => [label, value]))

    before(async () => {
      env = await backend.open()
      rt = new Runtime(env.provider, { ...FAST, maxAttempts: 3 })
      rt.registerActivity('Echo', async (_ctx, v) => v)
      rt.registerActivity('ReturnBad', async (_ctx, label) => badResults.get(label))
      rt.registerActivity('ThrowNul', async () => {
        throw new Error('bad\0message\ud800')
      })
      rt.registerOrchestration('EchoOrch', function* (ctx, input) {
        return yield ctx.scheduleActivity('Echo', input)
      })
      rt.registerOrchestration('ActivityReturnsBad', function* (ctx, label) {
        try {
          yield ctx.scheduleActivity('ReturnBad', label)
          return 'accepted'
        } catch (e) {
          return e.message
        }
      })
      rt.registerOrchestration('ReturnsBad', function* (_ctx, label) {
        return badResults.get(label)
      })
      rt.registerOrchestration('SchedulesBad', function* (ctx, label) {
        try {
          yield ctx.scheduleActivity('Echo', badResults.get(label))
          return 'accepted'
        } catch (e) {
          return `${e.name}: ${e.message}`
        }
      })
      rt.registerOrchestration('BadStatusAndValue', function* (ctx) {
        const errors = []
        const tooBig = (limit) => 'x'.repeat(limit + 1)
        for (const [status, value] of [['a\0b', 'a\0b'], ['a\ud800', 'a\ud800'], [tooBig(MAX_CUSTOM_STATUS_BYTES), tooBig(MAX_KV_VALUE_BYTES)], [42, 42]]) {
          try {
            ctx.setCustomStatus(status)
            errors.push('accepted')
          } catch (e) {
            errors.push(`${e.name}: ${e.message}`)
          }
          try {
            ctx.setValue('k', value)
            errors.push('accepted')
          } catch (e) {
            errors.push(`${e.name}: ${e.message}`)
          }
        }
        // The limits themselves are accepted.
        ctx.setCustomStatus('s'.repeat(MAX_CUSTOM_STATUS_BYTES))
        ctx.setValue('k', 'v'.repeat(MAX_KV_VALUE_BYTES))
        ctx.setCustomStatus('fine')
        return errors
      })
      rt.registerOrchestration('CatchNul', function* (ctx) {
        try {
          yield ctx.scheduleActivity('ThrowNul')
        } catch (e) {
          return e.message
        }
      })
      await rt.start()
      client = new Client(env.provider)
    })

    after(async () => {
      await rt?.shutdown(2000)
      await env?.cleanup()
    })

    async function assertNothingWritten(ids) {
      for (const id of ids) {
        assert.equal((await client.getStatus(id)).status, 'NotFound', id)
      }
      if (backend.name === 'postgres') {
        const pg = require('pg')
        const c = new pg.Client({ connectionString: DATABASE_URL })
        await c.connect()
        try {
          const schema = env.provider.schema
          for (const table of ['instances', 'orchestrator_queue', 'history']) {
            const { rows } = await c.query(`SELECT count(*)::int AS n FROM "${schema}"."${table}" WHERE instance_id = ANY($1)`, [ids])
            assert.equal(rows[0].n, 0, `${table} has rows for refused ids`)
          }
        } finally {
          await c.end()
        }
      }
    }

    test('client inputs and event data that JSON cannot carry are refused; nothing is written', async () => {
      const ids = []
      for (const [label, value, Class, pattern] of badPayloads()) {
        const id = uid('badin')
        ids.push(id)
        await assert.rejects(client.startOrchestration(id, 'EchoOrch', value), (e) => {
          assert.ok(e instanceof Class, `${label}: ${e.name}: ${e.message}`)
          assert.match(e.message, /^input /, label)
          assert.match(e.message, pattern, label)
          return true
        })
        await assert.rejects(client.startOrchestrationVersioned(id, 'EchoOrch', value, '1.0.0'), Class, label)
        await assert.rejects(client.raiseEvent(id, 'Evt', value), (e) => {
          assert.ok(e instanceof Class, `${label}: ${e.name}`)
          assert.match(e.message, /^data /, label)
          return true
        })
      }
      await assertNothingWritten(ids)
    })

    test('invalid instance ids and names are refused; nothing is written', async () => {
      const cases = [
        ['', TypeError, /instanceId must be a non-empty string/],
        [42, TypeError, /instanceId must be a non-empty string \(got number 42\)/],
        [null, TypeError, /instanceId must be a non-empty string/],
        [{}, TypeError, /instanceId must be a non-empty string/],
        ['a\0b', TypeError, /instanceId must not contain NUL characters \(found one at index 1\)/],
        ['a\ud800', TypeError, /instanceId must be well-formed UTF-16 \(lone surrogate at index 1\)/],
        ['x'.repeat(1025), RangeError, /instanceId must be at most 1024 bytes as UTF-8 \(got 1025\)/],
        ['é'.repeat(513), RangeError, /instanceId must be at most 1024 bytes/],
      ]
      for (const [id, Class, pattern] of cases) {
        await assert.rejects(client.startOrchestration(id, 'EchoOrch', 1), (e) => e instanceof Class && pattern.test(e.message))
        await assert.rejects(client.raiseEvent(id, 'Evt', 1), Class)
        await assert.rejects(client.getStatus(id), Class)
      }
      const id = uid('badname')
      await assert.rejects(client.startOrchestration(id, 'Echo\0Orch', 1), /orchestrationName must not contain NUL/)
      await assert.rejects(client.raiseEvent(id, 'E\ud800', 1), /eventName must be well-formed UTF-16/)
      await assertNothingWritten([id, 'a\uFFFD', 'a', 'ab'])
      // The longest allowed id works.
      const longest = `${uid('max')}-`.padEnd(1024, 'x')
      await client.startOrchestration(longest, 'EchoOrch', 'ok')
      assert.equal((await client.waitForOrchestration(longest, 60_000)).output, 'ok')
    })

    test('unusual but valid payloads round-trip exactly', async () => {
      for (const [label, value] of edgePayloads()) {
        const id = uid('edge')
        await client.startOrchestration(id, 'EchoOrch', value)
        const st = await client.waitForOrchestration(id, 60_000)
        assert.equal(st.status, 'Completed', `${label}: ${st.error}`)
        // Exactly what JSON carries (e.g. -0 becomes 0, as in JSON.stringify).
        assert.deepEqual(st.output, JSON.parse(JSON.stringify(value)), label)
      }
    })

    test('activity results and orchestration outputs JSON cannot carry fail the work with a clear message', async () => {
      for (const label of ['BigInt', 'cycle', 'nested function', 'NaN', 'lone high surrogate', 'too deep', 'oversized']) {
        const [, , , pattern] = badPayloads().find(([l]) => l === label)
        const a = uid('badresult')
        await client.startOrchestration(a, 'ActivityReturnsBad', label)
        const sa = await client.waitForOrchestration(a, 60_000)
        assert.equal(sa.status, 'Completed', `${label}: ${sa.error}`)
        assert.match(sa.output, /activity "ReturnBad" returned an invalid result: result /, label)
        assert.match(sa.output, pattern, label)

        const o = uid('badoutput')
        await client.startOrchestration(o, 'ReturnsBad', label)
        const so = await client.waitForOrchestration(o, 60_000)
        assert.equal(so.status, 'Failed', label)
        assert.match(so.error, /orchestration returned an invalid output: output /, label)
        assert.match(so.error, pattern, label)

        const s = uid('badschedule')
        await client.startOrchestration(s, 'SchedulesBad', label)
        const ss = await client.waitForOrchestration(s, 60_000)
        assert.equal(ss.status, 'Completed', `${label}: ${ss.error}`)
        assert.match(ss.output, /^(TypeError|RangeError): input /, label)
      }
    })

    test('custom status and values: NUL, lone surrogates, over duroxide\'s limits and non-strings are refused at the call', async () => {
      const id = uid('status')
      await client.startOrchestration(id, 'BadStatusAndValue')
      const st = await client.waitForOrchestration(id, 60_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.equal(st.customStatus, 'fine')
      const [nulStatus, nulValue, loneStatus, loneValue, bigStatus, bigValue, numStatus, numValue] = st.output
      assert.match(nulStatus, /^TypeError: status must not contain NUL/)
      assert.match(nulValue, /^TypeError: value of key "k" must not contain NUL/)
      assert.match(loneStatus, /^TypeError: status must be well-formed UTF-16/)
      assert.match(loneValue, /^TypeError: value of key "k" must be well-formed UTF-16/)
      assert.match(bigStatus, /^RangeError: status must be at most 262144 bytes as UTF-8 \(got 262145\)/)
      assert.match(bigValue, /^RangeError: value of key "k" must be at most 65536 bytes as UTF-8 \(got 65537\)/)
      assert.match(numStatus, /^TypeError: status must be a string/)
      assert.match(numValue, /^TypeError: value of key "k" must be a string \(got number 42\)/)
    })

    test('an activity error with NUL and a lone surrogate is stored (sanitized), not lost', async () => {
      const id = uid('nulerr')
      await client.startOrchestration(id, 'CatchNul')
      const st = await client.waitForOrchestration(id, 60_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.match(st.output, /bad\uFFFDmessage\uFFFD/)
    })

    test('the runtime still works after all of the above', async () => {
      const id = uid('alive')
      await client.startOrchestration(id, 'EchoOrch', { alive: true })
      assert.deepEqual((await client.waitForOrchestration(id, 60_000)).output, { alive: true })
    })
  })
}
