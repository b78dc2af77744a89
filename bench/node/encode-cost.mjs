// What encoding a payload costs (lib/json.js) against a bare JSON.stringify:
// `node bench/node/encode-cost.mjs`. Prints the median of 5 rounds per encoder and payload;
// the figures in docs/input-rules.md come from this.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const json = require('../../lib/json.js')

const ROUNDS = 5
const ROUND_MS = 200

function nestedRecords(count) {
  return {
    rows: Array.from({ length: count }, (_, i) => ({
      id: i,
      name: `item-${i}`,
      price: i * 1.25,
      tags: ['a', 'bb', `t${i % 7}`],
      meta: { created: '2024-01-01T00:00:00Z', ok: i % 2 === 0, dims: [i, i + 1, i + 2] },
      note: 'lorem ipsum dolor sit amet '.repeat(8),
    })),
  }
}

const payloads = {
  'nested 1.6 MB': nestedRecords(4400),
  'small object': { id: 42, name: 'order-42', items: [{ sku: 'A1', qty: 2 }, { sku: 'B7', qty: 1 }], customer: { name: 'Ada Lovelace', email: 'ada@example.com', city: 'London' }, total: 123.45, currency: 'EUR', paid: true },
  '200k numbers': Array.from({ length: 200_000 }, (_, i) => i * 0.5 - 7),
  'non-ASCII text': Object.fromEntries(Array.from({ length: 8000 }, (_, i) => [`ключ${i}`, `Привет, мир 你好世界 😀 ${i} ${'é'.repeat(40)}`])),
}

const keep = (_key, value) => value
const encoders = {
  'JSON.stringify': (v) => JSON.stringify(v),
  // The floor of any check done in a replacer: the call per value, nothing checked.
  'no-op replacer': (v) => JSON.stringify(v, keep),
  encode: (v) => json.encode(v, 'input'),
}
// Absent before the fast path: run on an older lib/ and `encode` is the strict encoder.
if (json.encodeStrict) encoders.encodeStrict = (v) => json.encodeStrict(v, 'input')

function nsPerOp(encoder, value) {
  const deadline = process.hrtime.bigint() + BigInt(ROUND_MS * 1e6)
  const start = process.hrtime.bigint()
  let ops = 0
  do {
    encoder(value)
    ops++
  } while (process.hrtime.bigint() < deadline)
  return Number(process.hrtime.bigint() - start) / ops
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
const show = (ns, bytes) => `${ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`} (${Math.round((bytes / ns) * 1e3)} MB/s)`

console.log(`node ${process.version}, median of ${ROUNDS} rounds of ${ROUND_MS} ms`)
for (const [label, value] of Object.entries(payloads)) {
  const bytes = Buffer.byteLength(JSON.stringify(value))
  const samples = Object.fromEntries(Object.keys(encoders).map((name) => [name, []]))
  for (const encoder of Object.values(encoders)) encoder(value)
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, encoder] of Object.entries(encoders)) samples[name].push(nsPerOp(encoder, value))
  }
  const base = median(samples['JSON.stringify'])
  const cells = Object.entries(samples).map(([name, ns]) => {
    const m = median(ns)
    return `${name} ${show(m, bytes)}${name === 'JSON.stringify' ? '' : ` ×${(m / base).toFixed(1)}`}`
  })
  console.log(`${label} (${bytes} B): ${cells.join(', ')}`)
}
