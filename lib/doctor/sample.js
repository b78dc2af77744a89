'use strict'

// Live, read-only sampling: how quickly ready work is consumed, and who waits on locks.
// Only SELECTs (no claims, locks or writes); see METHOD for what is measured.

const { COMMON_QUERIES } = require('./queries')
const { check, THRESHOLDS } = require('./checks')
const { fmtDuration, fmtMs, plural, stats, round } = require('./format')

const INTERVAL_MS = 250
const LIST_CAP = 1000

function method(seconds, claimClock) {
  return (
    `every ${INTERVAL_MS} ms for ${seconds} s, list the oldest ≤${LIST_CAP} ready messages of each queue ` +
    '(visible and not under a live lease, by the database clock); a message that drops out of the list was ' +
    'claimed (or acked and deleted), and its wait is at most the sample time minus its visible_at. ' +
    'Orchestrator leases stamped during the window add exact waits: lease start minus visible_at of the ' +
    `first-delivery messages they hold (${claimClock === 'database' ? 'database clock' : "duroxide-pg's locked_at, the caller's clock"}). ` +
    'Enqueued = advance of the id sequence, removed = enqueued minus growth of the row count. ' +
    'Claims quicker than one interval are counted (removed) but not timed. pg_locks/pg_stat_activity are ' +
    'read on every sample for backends waiting on locks on the schema.'
  )
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

class QueueTracker {
  constructor() {
    this.tracked = new Map() // id -> visible_at ms
    this.waits = []
    this.firstOldest = undefined
    this.lastIds = new Set()
    this.readyStart = null
    this.readyEnd = null
    this.readyMax = 0
    this.capped = false
  }

  observe(list, nowMs) {
    const ids = new Set(list.map((e) => e[0]))
    const full = list.length >= LIST_CAP
    if (full) this.capped = true
    const last = list[list.length - 1]
    const before = (vis, id) => !last || vis < last[1] || (vis === last[1] && BigInt(id) < BigInt(last[0]))
    for (const [id, vis] of this.tracked) {
      if (ids.has(id)) continue
      // With a full list, a message younger than its last entry may just have been cut off.
      if (full && !before(vis, id)) continue
      this.waits.push(Math.max(0, nowMs - vis))
      this.tracked.delete(id)
    }
    for (const [id, vis] of list) if (!this.tracked.has(id)) this.tracked.set(id, vis)
    if (this.firstOldest === undefined) this.firstOldest = list.length ? list[0][0] : null
    if (this.readyStart === null) this.readyStart = list.length
    this.readyEnd = list.length
    this.readyMax = Math.max(this.readyMax, list.length)
    this.lastIds = ids
  }

  get oldestStillReady() {
    return this.firstOldest !== null && this.firstOldest !== undefined && this.lastIds.has(this.firstOldest)
  }
}

async function counters(client, q, schema) {
  const c = (await client.query(q.queue_counters, [schema])).rows[0]
  return {
    orchTotal: Number(c.orch_total),
    workerTotal: Number(c.worker_total),
    orchSeq: Number(c.orch_seq),
    workerSeq: Number(c.worker_seq),
  }
}

/** Collect lock waiters seen on every sample, keyed by backend and lock. */
class WaiterLog {
  constructor() {
    this.byKey = new Map()
    this.samples = 0
  }

  add(rows) {
    this.samples++
    for (const r of rows) {
      const key = `${r.pid}:${r.locktype}:${r.advisory_key ?? ''}`
      const prev = this.byKey.get(key)
      const waiting = Number(r.waiting_s ?? 0)
      if (!prev) {
        this.byKey.set(key, {
          pid: r.pid,
          locktype: r.locktype,
          mode: r.mode,
          applicationName: r.application_name ?? null,
          onTables: r.on_tables,
          namesSchema: r.names_schema,
          advisoryKey: r.advisory_key ?? null,
          blockedBy: r.blocked_by ?? [],
          waitingSeconds: waiting,
          seen: 1,
        })
      } else {
        prev.waitingSeconds = Math.max(prev.waitingSeconds, waiting)
        prev.seen++
        prev.onTables = prev.onTables || r.on_tables
        prev.namesSchema = prev.namesSchema || r.names_schema
      }
    }
  }
}

/**
 * Sample for `seconds`, one short statement at a time. Returns { lockWaiters, fetchLatency }
 * checks. pg_locks is read even when seconds is 0. `claimClock` names the clock of the lease
 * stamps: 'database' or 'caller'.
 */
async function sampleChecks(client, { kind, q, seconds, schemaOid, schema, claimClock }) {
  const waitersSql = COMMON_QUERIES.lock_waiters
  const waiterParams = [schemaOid, `${schema.toLowerCase()}.`]
  const log = new WaiterLog()
  log.add((await client.query(waitersSql, waiterParams)).rows)

  let fetchLatency
  if (seconds === 0) {
    fetchLatency = check('fetch_latency', 'ok', { sampleSeconds: 0, method: null }, 'not sampled (--sample-seconds 0)')
  } else {
    const orch = new QueueTracker()
    const worker = new QueueTracker()
    const claimWaits = new Map() // lease token -> wait ms (null: redelivery only)
    const c0 = await counters(client, q, schema)
    const started = Date.now()
    let startMs = null
    let ticks = 0
    for (;;) {
      const t = (await client.query(q.sample_tick, [LIST_CAP, startMs ?? 0])).rows[0]
      const nowMs = Number(t.now_ms)
      if (startMs === null) startMs = nowMs
      else for (const [token, , wait] of t.claims) if (!claimWaits.has(token)) claimWaits.set(token, wait)
      orch.observe(t.orch, nowMs)
      worker.observe(t.worker, nowMs)
      ticks++
      if (ticks > 1) log.add((await client.query(waitersSql, waiterParams)).rows)
      const elapsed = Date.now() - started
      if (elapsed >= seconds * 1000) break
      await sleep(Math.min(INTERVAL_MS, seconds * 1000 - elapsed))
    }
    const c1 = await counters(client, q, schema)
    const windowS = (Date.now() - started) / 1000
    const flow = (seq0, seq1, tot0, tot1) => {
      const enqueued = Math.max(0, seq1 - seq0)
      return { enqueued, removed: Math.max(0, enqueued - (tot1 - tot0)) }
    }
    const leaseWaitsRaw = [...claimWaits.values()].filter((w) => w !== null).map(Number)
    const summarize = (tr, f, extra = {}, extraWaits = []) => ({
      readyStart: tr.readyStart,
      readyEnd: tr.readyEnd,
      readyMax: tr.readyMax,
      readyListCapped: tr.capped,
      observedClaims: tr.waits.length,
      observedWaitMs: stats(tr.waits),
      ...extra,
      waitMs: stats([...tr.waits, ...extraWaits]),
      enqueued: f.enqueued,
      removed: f.removed,
      removedPerSecond: round(f.removed / Math.max(windowS, 0.001), 2),
      oldestReadyNotConsumed: tr.oldestStillReady && tr.waits.length === 0 && f.removed === 0,
    })
    const value = {
      sampleSeconds: seconds,
      intervalMs: INTERVAL_MS,
      ticks,
      method: method(seconds, claimClock),
      orchestrator: summarize(
        orch,
        flow(c0.orchSeq, c1.orchSeq, c0.orchTotal, c1.orchTotal),
        { leaseClaims: claimWaits.size, leaseWaitMs: stats(leaseWaitsRaw) },
        leaseWaitsRaw,
      ),
      worker: summarize(worker, flow(c0.workerSeq, c1.workerSeq, c0.workerTotal, c1.workerTotal)),
    }
    fetchLatency = latencyCheck(value, ticks)
  }
  const lockWaiters = await waitersCheck(client, kind, q, log)
  return { lockWaiters, fetchLatency }
}

function latencyCheck(value, ticks) {
  const parts = []
  const problems = []
  for (const name of ['orchestrator', 'worker']) {
    const v = value[name]
    const w = v.waitMs
    let s = `${name}: ${v.readyStart}${v.readyListCapped ? '+' : ''} → ${v.readyEnd}${v.readyListCapped ? '+' : ''} ready, ` +
      `${v.removed} removed, ${v.enqueued} enqueued`
    if (w.count) {
      s += `, ${plural(w.count, 'wait')} timed: p50 ${fmtMs(w.p50)}, p95 ${fmtMs(w.p95)}, max ${fmtMs(w.max)}`
    }
    parts.push(s)
    if (v.oldestReadyNotConsumed && ticks >= 2) {
      problems.push(`${name}: ready work was not consumed during ${value.sampleSeconds} s (no claim seen — is a runtime polling this schema?)`)
    } else if (w.count && w.p95 >= THRESHOLDS.fetchWaitWarnMs) {
      problems.push(`${name}: ready messages waited ${fmtMs(w.p95)} (p95) before a claim (warn ≥ ${fmtMs(THRESHOLDS.fetchWaitWarnMs)})`)
    }
  }
  const detail = `${parts.join('; ')}${problems.length ? ` — ${problems.join('; ')}` : ''}`
  return check('fetch_latency', problems.length ? 'warn' : 'ok', value, detail, [`method: ${value.method}`])
}

async function waitersCheck(client, kind, q, log) {
  const all = [...log.byKey.values()]
  const keys = [...new Set(all.filter((w) => w.advisoryKey !== null).map((w) => w.advisoryKey))]
  const instanceByKey = new Map()
  if (keys.length) {
    const rows = (await client.query(q.advisory_instances, [keys])).rows
    for (const r of rows) instanceByKey.set(r.key, r.instance_id)
  }
  const waiters = []
  let unattributed = 0
  for (const w of all) {
    const instanceId = w.advisoryKey !== null ? instanceByKey.get(w.advisoryKey) ?? null : null
    if (!w.onTables && !w.namesSchema && !instanceId) {
      unattributed++
      continue
    }
    waiters.push({
      pid: w.pid,
      locktype: w.locktype,
      mode: w.mode,
      applicationName: w.applicationName,
      instanceId,
      blockedBy: w.blockedBy,
      waitingSeconds: round(w.waitingSeconds),
      samplesSeen: w.seen,
    })
  }
  waiters.sort((a, b) => b.waitingSeconds - a.waitingSeconds)
  const maxWait = waiters.length ? waiters[0].waitingSeconds : 0
  const value = { waiters, unattributed, maxWaitSeconds: maxWait, samples: log.samples }
  const lines = waiters.slice(0, 10).map(
    (w) =>
      `pid ${w.pid}${w.applicationName ? ` (${w.applicationName})` : ''} waiting ${fmtDuration(w.waitingSeconds)} for ` +
      `${w.locktype} ${w.mode}${w.instanceId ? ` on instance ${w.instanceId}` : ''}` +
      `${w.blockedBy.length ? `, blocked by pid ${w.blockedBy.join(', ')}` : ''}`,
  )
  const advisory = waiters.filter((w) => w.locktype === 'advisory').length
  const brief = waiters.filter((w) => w.waitingSeconds < THRESHOLDS.lockWaitWarnS).length
  const tail = unattributed ? `; ${plural(unattributed, 'other lock waiter')} in this database, not tied to the schema` : ''
  if (waiters.length === 0) {
    return check('lock_waiters', 'ok', value, `no backend waiting on a lock of this schema in ${plural(log.samples, 'sample')}${tail}`)
  }
  const summary =
    `${plural(waiters.length, 'backend')} seen waiting on locks of this schema in ${plural(log.samples, 'sample')}` +
    `${advisory ? ` (${advisory} on per-instance advisory locks)` : ''}, longest ${fmtDuration(maxWait)}${tail}`
  if (maxWait >= THRESHOLDS.lockWaitFailS) {
    const why =
      kind === 'duroxide-pg'
        ? ': duroxide-pg fetches that wait on an instance advisory lock get leases that may already be stale'
        : ': something holds rows or tables of the schema (steadfast claims never wait; look at the blocking pid)'
    return check('lock_waiters', 'fail', value, `${summary} (fail ≥ ${fmtDuration(THRESHOLDS.lockWaitFailS)})${why}`, lines)
  }
  if (brief === waiters.length) {
    // Commits queue briefly for the NOTIFY lock and row locks; only longer waits matter.
    return check('lock_waiters', 'ok', value, `${summary} (all brief: under ${fmtDuration(THRESHOLDS.lockWaitWarnS)})`, lines)
  }
  return check('lock_waiters', 'warn', value, `${summary} (warn ≥ ${fmtDuration(THRESHOLDS.lockWaitWarnS)})`, lines)
}

module.exports = { sampleChecks, INTERVAL_MS, LIST_CAP }
