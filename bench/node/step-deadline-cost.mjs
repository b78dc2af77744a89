// What a step of orchestration code costs under the retried-turn deadline (lib/step-guard.js,
// vm's watchdog) against a plain generator step: `node bench/node/step-deadline-cost.mjs`.
// Prints ns per step for each; the figure in docs/guarantees.md comes from this.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { runWithDeadline } = require('../../lib/step-guard.js')

const STEPS = 20_000
function* counter() {
  let n = 0
  for (;;) n = (yield n + 1) ?? n
}

function nsPerStep(step) {
  const gen = counter()
  gen.next()
  const t = process.hrtime.bigint()
  for (let i = 0; i < STEPS; i++) step(() => gen.next(i))
  return Number(process.hrtime.bigint() - t) / STEPS
}

for (let round = 1; round <= 3; round++) {
  const plain = nsPerStep((s) => s())
  const guarded = nsPerStep((s) => runWithDeadline(s, 10_000))
  console.log(`round ${round}: plain ${plain.toFixed(0)} ns/step, under the deadline ${guarded.toFixed(0)} ns/step`)
}
