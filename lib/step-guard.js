'use strict'

// Runs one synchronous step of orchestration code under a deadline. vm's watchdog is the one
// thing that can interrupt JS that never yields (an endless loop) on the thread running it.
// It costs 65-90 µs a step (bench/node/step-deadline-cost.mjs), so only the steps of a
// retried turn pay it: see src/retried_turns.rs.

const vm = require('node:vm')

const sandbox = vm.createContext({ step: null })
const script = new vm.Script('step()', { filename: 'steadfast-step-deadline' })
/** The watchdog's error is made in the sandbox's realm, and nothing else thrown there is. */
const SandboxError = vm.runInContext('Error', sandbox)

/** Thrown in place of a step's result when the step ran past its deadline. */
class StepDeadlineExceeded extends Error {}

/** `step()`, interrupted once it has run `ms` without returning. */
function runWithDeadline(step, ms) {
  sandbox.step = step
  try {
    return script.runInContext(sandbox, { timeout: ms, displayErrors: false })
  } catch (e) {
    // A timeout of the orchestration's own nested vm call comes from another realm: it is the
    // orchestration's error. (Telling them apart by elapsed time fails: the watchdog can fire
    // a fraction of a millisecond before `ms` by performance.now().)
    if (e instanceof SandboxError && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new StepDeadlineExceeded()
    throw e
  } finally {
    sandbox.step = null
  }
}

module.exports = { runWithDeadline, StepDeadlineExceeded }
