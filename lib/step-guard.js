'use strict'

// Runs one synchronous step of orchestration code under a deadline. vm's watchdog is the one
// thing that can interrupt JS that never yields (an endless loop) on the thread running it.
// It costs 65-90 µs a step (bench/node/step-deadline-cost.mjs), so only the steps of a
// retried turn pay it: see src/retried_turns.rs.

const vm = require('node:vm')
const { performance } = require('node:perf_hooks')

const sandbox = vm.createContext({ step: null })
const script = new vm.Script('step()', { filename: 'steadfast-step-deadline' })

/** Thrown in place of a step's result when the step ran past its deadline. */
class StepDeadlineExceeded extends Error {}

/** `step()`, interrupted once it has run `ms` without returning. */
function runWithDeadline(step, ms) {
  const began = performance.now()
  sandbox.step = step
  try {
    return script.runInContext(sandbox, { timeout: ms, displayErrors: false })
  } catch (e) {
    // A timeout of the orchestration's own nested vm call is the orchestration's error.
    if (e?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT' && performance.now() - began >= ms) throw new StepDeadlineExceeded()
    throw e
  } finally {
    sandbox.step = null
  }
}

module.exports = { runWithDeadline, StepDeadlineExceeded }
