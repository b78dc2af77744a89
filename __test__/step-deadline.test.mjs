// The step deadline of retried turns (lib/step-guard.js) on its own: a step that never
// returns is always reported as past the deadline (however close to the deadline the
// watchdog fires), a timeout of the step's own nested vm call stays the step's error, and a
// step that returns gives its value.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import vm from 'node:vm'

const require = createRequire(import.meta.url)
const { runWithDeadline, StepDeadlineExceeded } = require('../lib/step-guard.js')

test('an endless step is past the deadline, every time', () => {
  let misread = 0
  for (let i = 0; i < 200; i++) {
    try {
      runWithDeadline(() => {
        for (;;);
      }, 5)
    } catch (e) {
      if (!(e instanceof StepDeadlineExceeded)) misread++
    }
  }
  assert.equal(misread, 0, `${misread} of 200 interrupted steps were not reported as past the deadline`)
})

test("a timeout of the step's own vm call is the step's error, not the deadline", () => {
  const own = vm.createContext({})
  assert.throws(
    () => runWithDeadline(() => vm.runInContext('for (;;);', own, { timeout: 20 }), 5000),
    (e) => !(e instanceof StepDeadlineExceeded) && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT',
  )
})

test('a step that returns gives its value', () => {
  assert.deepEqual(runWithDeadline(() => ({ done: false, value: 42 }), 1000), { done: false, value: 42 })
})
