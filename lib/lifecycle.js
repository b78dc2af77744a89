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

const TRACKED = Symbol('steadfast.lifecycleTracked')

/**
 * Keep `setWanted(boolean)` in step with whether `emitter` has a lifecycle listener. Call it
 * again after `removeAllListeners()`, which also removes the two trackers: it puts them back
 * (once) and resets the state from the listeners now registered.
 */
function trackLifecycleListeners(emitter, setWanted) {
  const state = emitter[TRACKED] ?? { wanted: false, setWanted }
  const set = (now) => {
    if (now !== state.wanted) {
      state.wanted = now
      state.setWanted(now)
    }
  }
  const anyListener = () => [...LIFECYCLE_KINDS].some((kind) => emitter.listenerCount(kind) > 0)
  if (!emitter[TRACKED]) {
    // 'newListener' fires just before the listener is added, 'removeListener' after it is gone.
    state.onNew = (name) => {
      if (LIFECYCLE_KINDS.has(name)) set(true)
    }
    state.onRemove = (name) => {
      if (LIFECYCLE_KINDS.has(name)) set(anyListener())
    }
    emitter[TRACKED] = state
  }
  if (!emitter.listeners('newListener').includes(state.onNew)) emitter.on('newListener', state.onNew)
  if (!emitter.listeners('removeListener').includes(state.onRemove)) emitter.on('removeListener', state.onRemove)
  set(anyListener())
}

module.exports = { LIFECYCLE_KINDS, trackLifecycleListeners }
