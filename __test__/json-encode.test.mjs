// The payload encoder (lib/json.js): its fast path must give encodeStrict's exact text or
// exact error (class, code, message) for every value, so a rule the fast path skipped shows
// up as a difference on the generated corpus below.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { runInNewContext } from 'node:vm'
import { SEED, rng } from './fuzz-support.mjs'

const require = createRequire(import.meta.url)
const { encode, encodeStrict, MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } = require('../lib/json.js')

function outcome(encoder, value) {
  try {
    return { text: encoder(value, 'input') }
  } catch (e) {
    return { error: e.constructor.name, code: e.code, message: e.message }
  }
}

/** The two encoders' outcome for `value`, after checking they agree. */
function agreed(value, label) {
  const fast = outcome(encode, value)
  assert.deepEqual(fast, outcome(encodeStrict, value), label)
  return fast
}

class Point {
  constructor(x, y) {
    this.x = x
    this.y = y
  }
}

/** Leaves of every kind JSON.stringify treats specially, accepted or refused. */
const PRIMITIVES = [
  0, -0, 1.5, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER + 2, 'text', '', 'a\0b', '😀 𝄞', '\u2028"\\\n', true, false, null, undefined,
  1n, NaN, Infinity, -Infinity, () => 0, function named() {}, Symbol('s'), '\ud800', 'x\udfff', 'ok\ud83d', '\udc00\ud800',
]
/** Object leaves, made afresh each time so no object is shared unless a case means it. */
const OBJECTS = [
  () => new Date(0), () => new Date(NaN), () => new Number(3), () => new String('\ud800'), () => new Boolean(false), () => Object(1n),
  () => new Number(NaN), () => new Number(-Infinity), () => Object(Symbol('boxed')),
  () => new Point(1, NaN), () => new Map([[1, 2]]), () => new Set([1]), () => /re/g, () => new Error('e'), () => new Uint8Array([1, 2]),
  () => [1, , 3], () => Object.assign([1, 2], { extra: NaN }), () => Object.assign(Object.create(null), { a: 1 }), () => Object.create({ inherited: NaN }),
  () => ({ [Symbol('k')]: NaN, ok: 1 }), () => Object.defineProperty({}, 'hidden', { value: NaN, enumerable: false }),
  () => ({ toJSON: () => 'x' }), () => ({ toJSON: () => NaN }), () => ({ toJSON: () => undefined }), () => ({ toJSON: () => () => 0 }),
  () => ({ toJSON: () => ({ deep: ['\udfff'] }) }), () => ({ toJSON: (key) => `key:${key}` }), () => ({ toJSON() { throw new Error('toJSON boom') } }),
  () => ({ get ok() { return 1 } }), () => ({ get bad() { return Infinity } }), () => ({ get boom() { throw new Error('getter boom') } }),
  () => new Proxy({ a: 1, b: -Infinity }, {}), () => new Proxy([1, 2], {}),
]
const LEAVES = [...PRIMITIVES.map((value) => () => value), ...OBJECTS]
const KEYS = ['a', 'b', 'k1', '0', '', '😀', 'with space', '__proto__', 'id', 'name', 'x\ud800', '\udc00']

const leaf = (r) => r.pick(LEAVES)()

function setKey(object, key, value) {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
}

/** `inner` inside `depth` alternating arrays and objects. */
function wrapped(r, inner, depth) {
  let v = inner
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { [r.pick(KEYS.slice(0, 6))]: v }
  return v
}

/** A random value: nested objects and arrays over LEAVES, with deep spots, shared parts and cycles. */
function generate(r) {
  const containers = []
  const build = (depth) => {
    if (depth > 4 || r.chance(0.3)) return leaf(r)
    if (r.chance(0.05)) return wrapped(r, leaf(r), r.int(MAX_PAYLOAD_DEPTH - 6, MAX_PAYLOAD_DEPTH + 1))
    const container = r.chance(0.5) ? [] : {}
    containers.push(container)
    for (let i = r.int(0, 4); i > 0; i--) {
      if (Array.isArray(container)) container.push(build(depth + 1))
      else setKey(container, r.pick(KEYS), build(depth + 1))
    }
    return container
  }
  const root = build(0)
  if (containers.length > 1 && r.chance(0.25)) setKey(r.pick(containers), 'back', root)
  if (containers.length > 1 && r.chance(0.1)) {
    const shared = r.pick(containers.slice(1))
    setKey(containers[0], 'again', shared)
  }
  return root
}

/** The rule each refusal names, so the corpus can be checked to cover every one. */
const RULES = {
  bigint: /is a BigInt/,
  function: /is a function/,
  symbol: /is a symbol/,
  'non-finite': /is (NaN|Infinity|-Infinity) \(JSON/,
  'lone surrogate key': /a key is not well-formed/,
  'lone surrogate': /is not well-formed UTF-16/,
  depth: /must be nested at most/,
  cycle: /circular reference/,
  'throwing code': /could not be serialized/,
  'no JSON': /must be JSON-serializable \(got/,
}

test(`encode() and encodeStrict() agree on generated values (seed ${SEED})`, () => {
  const r = rng(SEED + 20)
  const seen = new Map(Object.keys(RULES).map((rule) => [rule, 0]))
  let accepted = 0
  for (let n = 0; n < 3000; n++) {
    const value = generate(r)
    const result = agreed(value, `case ${n}`)
    if (result.text !== undefined) {
      accepted++
      continue
    }
    const rule = Object.keys(RULES).find((name) => RULES[name].test(result.message))
    assert.ok(rule, `case ${n}: unexpected refusal ${result.message}`)
    seen.set(rule, seen.get(rule) + 1)
  }
  for (const [rule, count] of seen) assert.ok(count > 0, `the corpus never broke the ${rule} rule`)
  assert.ok(accepted > 300 && accepted < 2700, `accepted ${accepted} of 3000`)
})

test('encode() and encodeStrict() agree at the depth limit', () => {
  const r = rng(SEED + 21)
  for (let depth = MAX_PAYLOAD_DEPTH - 2; depth <= MAX_PAYLOAD_DEPTH + 2; depth++) {
    for (const inner of [1, [], {}, null, 'x', NaN, undefined]) agreed(wrapped(r, inner, depth), `depth ${depth}`)
  }
  agreed(wrapped(r, 1, 100_000), 'far too deep')
  // Depth counts ancestors, not earlier siblings: many deep branches side by side are fine.
  const wide = Array.from({ length: 50 }, () => wrapped(r, 1, MAX_PAYLOAD_DEPTH - 1))
  assert.ok(agreed(wide, 'wide').text)
})

test('encode() and encodeStrict() agree at the size limit', () => {
  const limit = MAX_PAYLOAD_BYTES
  const cases = [
    ['x'.repeat(limit - 2), true],
    ['x'.repeat(limit - 1), false],
    ['€'.repeat((limit - 2) / 3), true],
    ['€'.repeat((limit - 2) / 3 + 1), false],
    [{ a: 'é'.repeat((limit - 8) / 2) }, true],
    [['😀'.repeat((limit - 4) / 4)], true],
    [['😀'.repeat((limit - 4) / 4), 1], false],
  ]
  for (const [value, fits] of cases) {
    const result = agreed(value, `${JSON.stringify(value).length} characters`)
    assert.equal(result.text !== undefined, fits, result.message)
  }
})

test('encode() reads a valid value once: getters and toJSON run once, as in JSON.stringify', () => {
  let reads = 0
  const value = {
    get counted() {
      reads++
      return [1, 'two']
    },
    date: { toJSON: () => (reads++, '2024-01-01') },
  }
  assert.equal(encode(value, 'input'), '{"counted":[1,"two"],"date":"2024-01-01"}')
  assert.equal(reads, 2)
})

test('encode() is reentrant: a toJSON that encodes does not disturb the outer check', () => {
  const inner = { toJSON: () => encode(Array.from({ length: 3 }, () => ({ a: [1] })), 'inner') }
  const value = { a: inner, b: wrapped(rng(SEED + 22), 1, MAX_PAYLOAD_DEPTH) }
  assert.deepEqual(outcome(encode, value), outcome(encodeStrict, value))
  assert.match(outcome(encode, value).message, /must be nested at most 100 levels deep/)
})

/**
 * Boxed primitives, each with the primitive JSON.stringify reads out of it (by ToNumber or
 * ToString for Number and String objects, so an own valueOf or toString counts; a Symbol
 * object stands for its symbol), some made in another realm.
 */
const BOXED = [
  [() => new Number(NaN), NaN],
  [() => new Number(Infinity), Infinity],
  [() => new Number(-Infinity), -Infinity],
  [() => new Number(-0), -0],
  [() => new Number(2.5), 2.5],
  [() => Object.assign(new Number(1), { valueOf: () => NaN }), NaN],
  [() => new String('x'), 'x'],
  [() => new String(''), ''],
  [() => new String('\ud800'), '\ud800'],
  [() => new String('😀 𝄞'), '😀 𝄞'],
  [() => Object.assign(new String('ok'), { toString: () => 'x\udfff' }), 'x\udfff'],
  [() => new Boolean(false), false],
  [() => new Boolean(true), true],
  [() => Object(1n), 1n],
  [() => Object(Symbol('s')), Symbol('s')],
  [() => runInNewContext('new Number(NaN)'), NaN],
  [() => runInNewContext('new String("y")'), 'y'],
]

/** `leaf` at a random spot of random containers; the same seed builds the same shape around any leaf. */
function around(seed, leaf) {
  const r = rng(seed)
  let value = leaf
  for (let depth = r.int(0, 5); depth > 0; depth--) {
    const siblings = Array.from({ length: r.int(0, 3) }, () => r.pick([1, 'two', null, true]))
    if (r.chance(0.5)) {
      siblings.splice(r.int(0, siblings.length), 0, value)
      value = siblings
    } else {
      value = { ...Object.fromEntries(siblings.map((s, i) => [`s${i}`, s])), [r.pick(['a', 'with space', '😀', '0'])]: value }
    }
  }
  return value
}

test('a boxed primitive follows the rules of the primitive it holds, on both paths', () => {
  for (let n = 0; n < 1000; n++) {
    const [box, primitive] = BOXED[n % BOXED.length]
    const seed = SEED + 23 + n
    assert.deepEqual(agreed(around(seed, box()), `case ${n}`), outcome(encodeStrict, around(seed, primitive)), `case ${n}: ${String(primitive)}`)
  }
  // A boxed primitive is a leaf, not a level of nesting.
  for (const [box, primitive] of BOXED) {
    const seed = SEED + 24
    assert.deepEqual(agreed(wrapped(rng(seed), box(), MAX_PAYLOAD_DEPTH), 'at the depth limit'), outcome(encodeStrict, wrapped(rng(seed), primitive, MAX_PAYLOAD_DEPTH)))
  }
  const refused = (message) => ({ error: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: `input must be JSON-serializable: ${message}` })
  assert.deepEqual(agreed({ a: [new Number(NaN)] }), refused('input.a[0] is NaN (JSON has no NaN or Infinity)'))
  assert.deepEqual(agreed([new Number(Infinity)]), refused('input[0] is Infinity (JSON has no NaN or Infinity)'))
  assert.deepEqual(agreed({ n: Object(1n) }), refused('input.n is a BigInt (convert it to a string or number)'))
  assert.deepEqual(agreed({ s: Object(Symbol('s')) }), refused('input.s is a symbol'))
  assert.deepEqual(agreed({ k: new String('\ud800') }), refused('input.k is not well-formed UTF-16 (lone surrogate at index 0)'))
  assert.deepEqual(agreed({ a: new String('x'), b: new Boolean(false), c: new Number(-0) }), { text: '{"a":"x","b":false,"c":0}' })
})
