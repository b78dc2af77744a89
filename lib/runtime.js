'use strict'

const { EventEmitter } = require('node:events')

const native = require('./native')
const { callAsync, callSync, describe, typeError } = require('./errors')
const { decode, encode } = require('./json')
const { sanitizeMessage } = require('./text')
const { runWithDeadline, StepDeadlineExceeded } = require('./step-guard')
const { failureOf, errorOf, messageOf } = require('./failure')
const { runtimeOptions, heartbeatIntervalMs, retriedStepDeadlineMs } = require('./options')
const { requireString, requireSemver, requireFunction, requireGeneratorFunction, integer } = require('./args')
const { MAX_TIMEOUT_MS } = require('./option-tables')
const { nativeOf } = require('./providers')
const { OrchestrationContext, ActivityContext, ScheduledTask, DESCRIPTOR } = require('./context')
const { registration, versionOf } = require('./refs')
const { LIFECYCLE_KINDS, trackLifecycleListeners } = require('./lifecycle')
const { serveMetrics } = require('./metrics-server')
const { forwardTo } = require('./logger')

const DEFAULT_VERSION = '1.0.0'
const RESERVED_PREFIX = '__duroxide_syscall:'
const DIAGNOSTIC_KINDS = new Set([
  'poisoned',
  'poisonLost',
  'poisonCommittedWithoutLease',
  'attemptCeilingEnforced',
  'historyTooLarge',
  'ackRejected',
  'claimExhausted',
  'messagesOrphaned',
  'diagnosticsLagged',
  'eventLoopStalled',
])

/** Failure text for Rust; NUL and lone surrogates (which PostgreSQL text cannot hold) replaced. */
function failureText(err) {
  if (err instanceof Error) return sanitizeMessage(err.stack || `${err.name}: ${err.message}`)
  return sanitizeMessage(describe(err))
}

/** Why an activity's `ctx.signal` aborted. */
function activityCancelled() {
  const err = new Error('the activity was cancelled: its orchestration no longer needs it, or its lease was lost')
  err.name = 'AbortError'
  err.code = 'ERR_STEADFAST_ACTIVITY_CANCELLED'
  return err
}

/** A string holding JSON becomes its value; anything else is kept. */
function decodeAgain(value) {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

/** The second decode of a `*Typed` task's result. */
function decodeTyped(task, value) {
  switch (task.type) {
    case 'all':
      return value.map((r) => ('ok' in r ? { ok: decodeAgain(r.ok) } : { err: decodeAgain(r.err) }))
    case 'race':
      return { index: value.index, value: decodeAgain(value.value) }
    default:
      return decodeAgain(value)
  }
}

/**
 * Runs registered orchestrations (generator functions) and activities (async functions).
 * An EventEmitter: see index.d.ts for the diagnostic events.
 */
class Runtime extends EventEmitter {
  #native
  /** name -> version -> generator function; per Runtime, never shared. */
  #orchestrations = new Map()
  #activities = new Set()
  /** turn id -> generator, for the turns in flight. */
  #turns = new Map()
  /** activity call id -> the controller of its `ctx.signal`, for the calls in flight. */
  #activityCalls = new Map()
  /** turn id -> the task it is waiting on (its result is post-processed: see #next). */
  #waits = new Map()
  /** turn id -> the attempt of a retried claim, for turns whose steps run under a deadline. */
  #retried = new Map()
  /** How long a step of a retried turn may run; null when the event-loop watch is off. */
  #retriedStepMs
  /** Keeps the process alive while running, and beats for the event-loop watch. */
  #keepAlive = null
  /** Listeners from serveMetrics(), closed by shutdown(). */
  #metricsServers = new Set()
  #heartbeatMs

  constructor(provider, options) {
    super()
    const nativeProvider = nativeOf(provider, 'provider')
    // runtimeOptions returns a null-prototype object: keep it one (a polluted
    // Object.prototype must not reach the native layer), without the JS-only logger.
    const nativeOptions = runtimeOptions(options)
    const { logger } = nativeOptions
    delete nativeOptions.logger
    this.#heartbeatMs = heartbeatIntervalMs(nativeOptions)
    this.#retriedStepMs = retriedStepDeadlineMs(nativeOptions)
    this.#native = callSync(() => new native.NativeRuntime(nativeProvider, nativeOptions))
    this.#native.setOrchestrationDriver((request) => this.#drive(request))
    this.#native.setDiagnosticListener((event) => this.#onDiagnostic(event))
    if (logger) this.#native.setLogger(forwardTo(logger))
    trackLifecycleListeners(this, (on) => this.#native.setLifecycleEvents(on))
  }

  /** Also puts back the tracking of lifecycle listeners, which it removes with the rest. */
  removeAllListeners(...names) {
    super.removeAllListeners(...names)
    trackLifecycleListeners(this)
    return this
  }

  /** @internal the native handle (tests use it to reach the Rust-side backstops). */
  get _native() {
    return this.#native
  }

  /** `(name, fn)`, or `(reference)` from defineActivity(). */
  registerActivity(nameOrReference, fnOfName) {
    const { name, fn } = registration('activity', nameOrReference, fnOfName)
    requireString('name', name)
    if (name.startsWith(RESERVED_PREFIX)) throw typeError('ERR_INVALID_ARG_VALUE', `name must not start with "${RESERVED_PREFIX}" (reserved for duroxide's system activities)`)
    requireFunction('fn', fn)
    if (this.#activities.has(name)) throw typeError('ERR_INVALID_ARG_VALUE', `name must be unique: activity "${name}" is already registered`)
    const nativeRuntime = this.#native
    const calls = this.#activityCalls
    const run = async (request) => {
      let req
      try {
        req = JSON.parse(request)
        if (req.abort !== undefined) {
          calls.get(req.abort)?.abort(activityCancelled())
          return '{}'
        }
        const controller = new AbortController()
        calls.set(req.id, controller)
        const ctx = new ActivityContext(nativeRuntime, req, controller.signal)
        const result = await fn(ctx, decode(req.input))
        let text
        try {
          text = encode(result, 'result')
        } catch (e) {
          return JSON.stringify({ err: sanitizeMessage(`activity "${name}" returned an invalid result: ${e.message}`) })
        }
        return JSON.stringify({ ok: text })
      } catch (e) {
        return JSON.stringify({ err: failureOf(e) })
      } finally {
        if (req?.abort === undefined) calls.delete(req?.id)
      }
    }
    callSync(() => this.#native.registerActivity(name, run))
    this.#activities.add(name)
    return this
  }

  /** duroxide-node's name for registerActivity (results are JSON-encoded either way). */
  registerActivityTyped(name, fn) {
    return this.registerActivity(name, fn)
  }

  /** `(name, fn)` as version 1.0.0, or `(reference)` from defineOrchestration*() at its version (default 1.0.0). */
  registerOrchestration(nameOrReference, fnOfName) {
    const { name, version = DEFAULT_VERSION, fn } = registration('orchestration', nameOrReference, fnOfName)
    return this.#registerOrchestration(name, version, fn)
  }

  /** duroxide-node's name for registerOrchestration. */
  registerOrchestrationTyped(name, fn) {
    return this.registerOrchestration(name, fn)
  }

  /** duroxide-node's name for registerOrchestrationVersioned. */
  registerOrchestrationVersionedTyped(name, version, fn) {
    return this.registerOrchestrationVersioned(name, version, fn)
  }

  /**
   * `(name, version, fn)`; `(reference, version)` from defineOrchestration*() (a versioned
   * reference's own version only); or `(reference)` from defineOrchestrationVersioned().
   */
  registerOrchestrationVersioned(nameOrReference, version, fnOfName) {
    const orchestration = registration('orchestration', nameOrReference, fnOfName)
    const registered =
      version === undefined && orchestration.version !== undefined ? orchestration.version : versionOf('version', orchestration, requireSemver('version', version))
    return this.#registerOrchestration(orchestration.name, registered, orchestration.fn)
  }

  #registerOrchestration(name, version, fn) {
    requireString('name', name)
    requireGeneratorFunction('fn', fn)
    const versions = this.#orchestrations.get(name) ?? new Map()
    if (versions.has(version)) {
      throw typeError('ERR_INVALID_ARG_VALUE', `name and version must be unique: orchestration "${name}" version ${version} is already registered`)
    }
    callSync(() => this.#native.registerOrchestration(name, version))
    versions.set(version, fn)
    this.#orchestrations.set(name, versions)
    return this
  }

  /** Start the dispatchers. Resolves once they run; keeps the process alive until shutdown. */
  async start() {
    await callAsync(() => this.#native.start())
    if (this.#heartbeatMs === null) {
      this.#keepAlive = setInterval(() => {}, 1 << 30)
    } else {
      this.#beat() // arms the watch
      this.#keepAlive = setInterval(() => this.#beat(), this.#heartbeatMs)
    }
  }

  /** The event loop answers: tell the watch; a stall it ends is reported as `eventLoopStalled`. */
  #beat() {
    let report = null
    try {
      report = this.#native.heartbeat()
    } catch {}
    if (report) this.#onDiagnostic(report)
  }

  /** Stop; in-flight work gets `timeoutMs` (default 1000) to finish. No-op when not running. */
  async shutdown(timeoutMs) {
    if (timeoutMs !== undefined) integer('timeoutMs', timeoutMs, 0, MAX_TIMEOUT_MS)
    try {
      await callAsync(() => this.#native.shutdown(timeoutMs))
    } finally {
      if (this.#keepAlive) clearInterval(this.#keepAlive)
      this.#keepAlive = null
      const servers = [...this.#metricsServers]
      this.#metricsServers.clear()
      await Promise.all(servers.map((s) => s.close()))
    }
  }

  /**
   * The process's metrics (duroxide's and the provider's) in the Prometheus text format;
   * with PostgreSQL the queue gauges are read from the database first.
   */
  async metrics() {
    return callAsync(() => this.#native.metricsText())
  }

  /** Serve metrics() over HTTP (`GET /metrics` on 127.0.0.1:9464 by default) until shutdown() or close(). */
  async serveMetrics(options) {
    const server = await serveMetrics(() => this.metrics(), options)
    const close = server.close
    server.close = () => {
      this.#metricsServers.delete(server)
      return close()
    }
    this.#metricsServers.add(server)
    return server
  }

  /** Counters since start, or null when not running. */
  metricsSnapshot() {
    return callSync(() => this.#native.metricsSnapshot()) ?? null
  }

  // ---- the generator driver (called synchronously from Rust, one turn at a time) ----

  #drive(request) {
    try {
      const req = JSON.parse(request)
      switch (req.op) {
        case 'create':
          return JSON.stringify(this.#create(req))
        case 'next':
          return JSON.stringify(this.#next(req))
        case 'dispose':
          this.#forget(req.turn)
          return '{}'
        default:
          return JSON.stringify({ status: 'failed', message: `internal: unknown driver op ${req.op}` })
      }
    } catch (e) {
      return JSON.stringify({ status: 'failed', message: `internal driver error: ${failureText(e)}` })
    }
  }

  #create(req) {
    const fn = this.#orchestrations.get(req.name)?.get(req.version)
    if (!fn) {
      return { status: 'failed', message: `orchestration "${req.name}" version ${req.version} is not registered on this Runtime` }
    }
    const ctx = new OrchestrationContext(this.#native, req.turn, req)
    if (req.attempt && this.#retriedStepMs !== null) this.#retried.set(req.turn, req.attempt)
    let gen
    try {
      gen = this.#runStep(req.turn, () => fn(ctx, decode(req.input)))
    } catch (e) {
      return this.#stepFailed(req.turn, e)
    }
    this.#turns.set(req.turn, gen)
    return this.#advance(req.turn, gen, () => gen.next())
  }

  #next(req) {
    const gen = this.#turns.get(req.turn)
    if (!gen) return { status: 'failed', message: `internal: unknown turn ${req.turn}` }
    const task = this.#waits.get(req.turn)
    this.#waits.delete(req.turn)
    if (req.ok) {
      // `all` results carry failures as text: the message, without the error's shape.
      let value = task?.type === 'all' ? req.value.map((r) => ('err' in r ? { err: messageOf(r.err) } : r)) : req.value
      if (task?.typed) value = decodeTyped(task, value)
      return this.#advance(req.turn, gen, () => gen.next(value))
    }
    const err = errorOf(req.error)
    if (req.index !== undefined && req.index !== null) err.index = req.index
    return this.#advance(req.turn, gen, () => gen.throw(err))
  }

  #advance(turn, gen, step) {
    for (;;) {
      let r
      try {
        r = this.#runStep(turn, step)
      } catch (e) {
        return this.#stepFailed(turn, e)
      }
      if (r.done) {
        this.#forget(turn)
        let output
        try {
          output = encode(r.value, 'output')
        } catch (e) {
          return { status: 'failed', message: sanitizeMessage(`orchestration returned an invalid output: ${e.message}`) }
        }
        return { status: 'completed', output }
      }
      if (r.value instanceof ScheduledTask) {
        const task = r.value[DESCRIPTOR]
        this.#waits.set(turn, task)
        return { status: 'yielded', task }
      }
      // Deterministic: the same bad yield throws at the same point on every replay.
      const bad = typeError('ERR_INVALID_ARG_TYPE', 'orchestrations may only yield tasks created by ctx.schedule*(), ctx.waitForEvent(), ctx.all(), ctx.race(), ...')
      step = () => gen.throw(bad)
    }
  }

  /** One synchronous step of orchestration code; under a deadline on a retried claim. */
  #runStep(turn, step) {
    return this.#retried.has(turn) ? runWithDeadline(step, this.#retriedStepMs) : step()
  }

  #stepFailed(turn, err) {
    const attempt = this.#retried.get(turn)
    this.#forget(turn)
    if (!(err instanceof StepDeadlineExceeded)) return { status: 'failed', message: failureText(err) }
    return {
      status: 'failed',
      message:
        `orchestration code ran for more than ${this.#retriedStepMs} ms without yielding, on a retried claim ` +
        `(attempt ${attempt}: an earlier attempt of this turn was not settled, as when code that never yields ` +
        'hangs the process running it). The step was interrupted and the orchestration failed, so that it ' +
        'cannot hang this process too.',
    }
  }

  #forget(turn) {
    this.#turns.delete(turn)
    this.#retried.delete(turn)
    this.#waits.delete(turn)
  }

  // ---- diagnostics ----

  #onDiagnostic(json) {
    let event
    try {
      event = JSON.parse(json)
    } catch {
      return
    }
    if (LIFECYCLE_KINDS.has(event.kind)) {
      // A failure's text may end in the trailer that carries an activity error's shape.
      if (typeof event.error === 'string') event.error = messageOf(event.error)
      this.#safeEmit(event.kind, event)
      return
    }
    if (!DIAGNOSTIC_KINDS.has(event.kind)) return
    this.#safeEmit(event.kind, event)
    this.#safeEmit('diagnostic', event)
  }

  /** Emit without letting a listener's throw or rejection reach the process. */
  #safeEmit(name, event) {
    for (const listener of this.rawListeners(name)) {
      try {
        const result = listener.call(this, event)
        if (result && typeof result.then === 'function') result.then(undefined, (e) => this.#listenerFailed(name, e))
      } catch (e) {
        this.#listenerFailed(name, e)
      }
    }
  }

  #listenerFailed(name, err) {
    try {
      process.emitWarning(`a "${name}" listener of steadfast Runtime threw: ${describe(err)}`, { code: 'STEADFAST_LISTENER_ERROR' })
    } catch {}
  }
}

module.exports = { Runtime }
