'use strict'

// Lifecycle events of a Runtime (src/lifecycle.rs makes them). Rust reads them off the
// acks only while JS listens for at least one of them: adding the first listener turns
// them on, removing the last turns them off.

const LIFECYCLE_KINDS = new Set([
  'orchestrationStarted',
  'orchestrationCompleted',
  'orchestrationFailed',
  'orchestrationContinuedAsNew',
  'activityFailed',
])

/** Keep `setWanted(boolean)` in step with whether `emitter` has a lifecycle listener. */
function trackLifecycleListeners(emitter, setWanted) {
  let wanted = false
  const set = (now) => {
    if (now !== wanted) {
      wanted = now
      setWanted(now)
    }
  }
  // 'newListener' fires just before the listener is added, 'removeListener' after it is gone.
  emitter.on('newListener', (name) => {
    if (LIFECYCLE_KINDS.has(name)) set(true)
  })
  emitter.on('removeListener', (name) => {
    if (LIFECYCLE_KINDS.has(name)) set([...LIFECYCLE_KINDS].some((kind) => emitter.listenerCount(kind) > 0))
  })
}

module.exports = { LIFECYCLE_KINDS, trackLifecycleListeners }
