'use strict'

// Client waits that an AbortSignal ends (src/client_waits.rs is the native half): the wait
// is registered natively before it starts, so an abort can never come first and be lost,
// and aborting ends the native wait too instead of leaving it to run out its timeout.

const native = require('./native')

/**
 * `start(waitId)` (a native wait call that carries the id), ended by `signal`: it then
 * rejects with `signal.reason`, as AbortSignal-aware APIs do. Without a signal, `start()`.
 */
async function abortable(signal, start) {
  if (signal === undefined) return start(undefined)
  signal.throwIfAborted()
  const id = native.beginWait()
  const onAbort = () => native.abortWait(id)
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    return await start(id)
  } catch (e) {
    if (e?.code === 'ERR_STEADFAST_ABORTED' && signal.aborted) throw signal.reason
    throw e
  } finally {
    signal.removeEventListener('abort', onAbort)
    native.endWait(id)
  }
}

module.exports = { abortable }
