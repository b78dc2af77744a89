'use strict'

// The snapshot checks: each reads the rows of doctor's statements (./layout.js) and returns
// { name, status: 'ok'|'warn'|'fail', value, detail } plus `lines` for the text report.

const { fmtDuration, fmtMs, plural, round } = require('./format')

/** Thresholds (seconds unless named otherwise); fixed, and printed in the report's details. */
const THRESHOLDS = Object.freeze({
  readyAgeWarnS: 60,
  readyAgeFailS: 900,
  stuckLeaseS: 900,
  liveLeaseWarnS: 600,
  lockWaitWarnS: 1,
  lockWaitFailS: 5,
  fetchWaitWarnMs: 5000,
})

function check(name, status, value, detail, lines = []) {
  return { name, status, value, detail, lines }
}

const num = (x) => (x === null || x === undefined ? null : Number(x))

function depthCheck(name, row) {
  const v = {
    total: num(row.total),
    ready: num(row.ready),
    delayed: num(row.delayed),
    leased: num(row.leased),
    instances: num(row.instances),
    maxAttemptCount: num(row.max_attempt_count) ?? 0,
  }
  const detail =
    v.total === 0
      ? 'empty'
      : `${plural(v.total, 'message')}${name === 'orchestrator_queue' ? ` for ${plural(v.instances, 'instance')}` : ''}: ` +
        `${v.ready} ready, ${v.delayed} delayed, ${v.leased} leased`
  return check(name, 'ok', v, detail)
}

function oldestReadyCheck(orch, worker) {
  const one = (r) =>
    r ? { ageSeconds: round(num(r.age_s)), id: r.id, instanceId: r.instance_id, attemptCount: num(r.attempt_count) } : null
  const v = { orchestrator: one(orch), worker: one(worker) }
  const ages = [v.orchestrator, v.worker].filter(Boolean).map((x) => x.ageSeconds)
  const max = ages.length ? Math.max(...ages) : 0
  const status = max >= THRESHOLDS.readyAgeFailS ? 'fail' : max >= THRESHOLDS.readyAgeWarnS ? 'warn' : 'ok'
  const part = (label, x) =>
    x
      ? `${label} ${fmtDuration(x.ageSeconds)} (id ${x.id}${x.instanceId ? `, instance ${x.instanceId}` : ''}, attempt ${x.attemptCount})`
      : `${label} none ready`
  let detail = `${part('orchestrator', v.orchestrator)}; ${part('worker', v.worker)}`
  if (status !== 'ok') {
    detail += ` — ready work has been visible for ${fmtDuration(max)} without being done ` +
      `(warn ≥ ${fmtDuration(THRESHOLDS.readyAgeWarnS)}, fail ≥ ${fmtDuration(THRESHOLDS.readyAgeFailS)})`
  }
  return check('oldest_ready_message', status, v, detail)
}

function attemptsCheck(row, maxAttempts, queueMax) {
  const messages = num(row.messages)
  const v = {
    maxAttempts,
    messages,
    instances: num(row.instances),
    maxAttemptCount: num(row.max_attempt_count),
    unsettled: num(row.unsettled),
    queueMaxAttemptCount: queueMax,
    top: (row.top || []).map((t) => ({
      queue: t.queue,
      instanceId: t.instance_id,
      attemptCount: t.attempt_count,
      messages: t.messages,
      leased: t.leased,
      hasToken: t.has_token,
      leaseExpiredSeconds: t.leased || t.lease_expired_s === null ? null : round(t.lease_expired_s),
    })),
  }
  if (messages === 0) {
    const m = Math.max(queueMax.orchestrator, queueMax.worker)
    return check('attempts_over_max', 'ok', v, `max attempt_count ${m} ≤ max_attempts ${maxAttempts}`)
  }
  const lines = v.top.map((t) => {
    const lease = t.leased
      ? 'live lease (being failed as poison now)'
      : t.hasToken && t.leaseExpiredSeconds !== null
        ? `lease expired ${fmtDuration(t.leaseExpiredSeconds)} ago, token still set`
        : 'no lease'
    return `${t.queue.padEnd(12)} ${t.instanceId}  attempt_count ${t.attemptCount}  ${plural(t.messages, 'message')}  ${lease}`
  })
  if (v.unsettled === 0) {
    return check(
      'attempts_over_max',
      'warn',
      v,
      `${plural(messages, 'message')} at max_attempts + 1 (${maxAttempts + 1}) under a live lease: the runtime is ` +
        'failing them as poison now; rerun to confirm they leave the queue',
      lines,
    )
  }
  return check(
    'attempts_over_max',
    'fail',
    v,
    `${plural(messages, 'message')} of ${plural(v.instances, 'instance')} past max_attempts ${maxAttempts} ` +
      `(max attempt_count ${v.maxAttemptCount}): redelivered past the poison limit — the incident's signature; ` +
      'poison is not being committed (pass --max-attempts if your runtime uses another limit)',
    lines,
  )
}

function expiredLeasesCheck(kind, inst, worker) {
  const label = kind === 'steadfast' ? 'instance lease' : 'instance lock'
  const v = {
    instances: {
      expired: num(inst.expired),
      withWork: num(inst.with_work),
      stuck: num(inst.stuck),
      oldestSeconds: round(num(inst.oldest_s)),
      top: (inst.top || []).map((t) => ({ instanceId: t.instance_id, expiredSeconds: round(t.expired_s), hasWork: t.has_work })),
    },
    worker: {
      expired: num(worker.expired),
      stuck: num(worker.stuck),
      oldestSeconds: round(num(worker.oldest_s)),
      top: (worker.top || []).map((t) => ({
        id: t.id,
        instanceId: t.instance_id,
        activityId: t.activity_id,
        attemptCount: t.attempt_count,
        expiredSeconds: round(t.expired_s),
      })),
    },
    stuckAfterSeconds: THRESHOLDS.stuckLeaseS,
  }
  const lines = [
    ...v.instances.top.map(
      (t) => `${label} ${t.instanceId}: expired ${fmtDuration(t.expiredSeconds)} ago${t.hasWork ? ', messages still queued' : ''}`,
    ),
    ...v.worker.top.map(
      (t) =>
        `work item ${t.id}${t.instanceId ? ` (instance ${t.instanceId}, activity ${t.activityId})` : ''}: ` +
        `expired ${fmtDuration(t.expiredSeconds)} ago, attempt ${t.attemptCount}`,
    ),
  ]
  const stuck = v.instances.stuck + v.worker.stuck
  const any = v.instances.expired + v.worker.expired
  const summary =
    `${plural(v.instances.expired, `expired ${label}`)} still carrying a token` +
    (v.instances.expired ? ` (oldest ${fmtDuration(v.instances.oldestSeconds)}, ${v.instances.withWork} with work queued)` : '') +
    `; ${plural(v.worker.expired, 'expired worker lease')}` +
    (v.worker.expired ? ` (oldest ${fmtDuration(v.worker.oldestSeconds)})` : '')
  if (stuck > 0) {
    return check(
      'expired_leases',
      'fail',
      v,
      `${summary} — ${plural(stuck, 'lease')} expired over ${fmtDuration(THRESHOLDS.stuckLeaseS)} ago with work waiting: ` +
        'nothing is reclaiming it',
      lines,
    )
  }
  if (any > 0) {
    const why =
      kind === 'steadfast'
        ? ' (a lease that ran out without ack keeps its token until its redelivery backoff ends and it is claimed again)'
        : ' (a crashed or blocked fetch leaves the row until the instance is claimed again)'
    return check('expired_leases', 'warn', v, summary + why, lines)
  }
  return check('expired_leases', 'ok', v, summary)
}

function bornExpiredCheck(kind, row) {
  const v = {
    count: num(row.count),
    top: (row.top || []).map((t) => ({ instanceId: t.instance_id, leaseMs: round(t.lease_ms) })),
    workerDetectable: false,
  }
  const rule = kind === 'steadfast' ? 'locked_until ≤ locked_at' : 'instance_locks.locked_until ≤ locked_at'
  const note = 'worker leases record no start time, so theirs cannot be detected'
  if (v.count > 0) {
    return check(
      'leases_born_expired',
      'fail',
      v,
      `${plural(v.count, 'instance lease')} stamped already expired (${rule}): a claim computed its lease from a stale time; ${note}`,
      v.top.map((t) => `instance ${t.instanceId}: lease length ${fmtMs(t.leaseMs)}`),
    )
  }
  return check('leases_born_expired', 'ok', v, `none (${rule}); ${note}`)
}

function liveLeaseCheck(kind, row) {
  const longest = row.instance_id
    ? { instanceId: row.instance_id, heldSeconds: round(num(row.held_s)), remainingSeconds: round(num(row.remaining_s)) }
    : null
  const v = { live: num(row.live), workerLive: num(row.worker_live), longest }
  let detail = `${v.live} live instance ${kind === 'steadfast' ? 'leases' : 'locks'}, ${v.workerLive} live worker leases`
  if (longest) {
    detail += `; longest held ${fmtDuration(longest.heldSeconds)} by ${longest.instanceId} (${fmtDuration(longest.remainingSeconds)} left)`
    if (kind !== 'steadfast') detail += ' (start time from the caller clock)'
  }
  if (longest && longest.heldSeconds >= THRESHOLDS.liveLeaseWarnS) {
    return check(
      'longest_live_lease',
      'warn',
      v,
      `${detail} — held over ${fmtDuration(THRESHOLDS.liveLeaseWarnS)}: a turn that long is unusual (renewed by a stuck worker?)`,
    )
  }
  return check('longest_live_lease', 'ok', v, detail)
}

function deadLettersCheck(row) {
  const v = {
    total: num(row.total),
    newestAgeSeconds: round(num(row.newest_age_s)),
    byReason: (row.by_reason || []).map((r) => ({ reason: r.reason, count: r.count })),
    byQueue: (row.by_queue || []).map((r) => ({ queue: r.queue, count: r.count })),
    newest: (row.newest || []).map((r) => ({
      id: r.id,
      queue: r.queue,
      instanceId: r.instance_id,
      reason: r.reason,
      attemptCount: r.attempt_count,
      maxAttempts: r.max_attempts,
      ageSeconds: round(r.age_s),
    })),
  }
  if (v.total === 0) return check('dead_letters', 'ok', v, 'none')
  const reasons = v.byReason.map((r) => `${r.reason} ${r.count}`).join(', ')
  const queues = v.byQueue.map((r) => `${r.queue} ${r.count}`).join(', ')
  return check(
    'dead_letters',
    'warn',
    v,
    `${plural(v.total, 'dead letter')} (${queues}; by reason: ${reasons}), newest ${fmtDuration(v.newestAgeSeconds)} ago — ` +
      'inspect with client.listDeadLetters(), then requeue or purge',
    v.newest.map(
      (r) =>
        `#${r.id} ${r.queue} ${r.instanceId} ${r.reason} attempt ${r.attemptCount}` +
        `${r.maxAttempts !== null && r.maxAttempts !== undefined ? `/${r.maxAttempts}` : ''} ${fmtDuration(r.ageSeconds)} ago`,
    ),
  )
}

/** Run every snapshot check (lock waiters and fetch latency come from sampling). */
async function snapshotChecks(client, { kind, q, maxAttempts }) {
  const one = async (sql, params = []) => (await client.query(sql, params)).rows[0]
  const byQueue = new Map((await client.query(q.queues)).rows.map((r) => [r.queue, r]))
  const orch = byQueue.get('orchestrator')
  const worker = byQueue.get('worker')
  const attempts = await one(q.attempts_over_max, [maxAttempts])
  const expiredInst = await one(q.expired_instance_leases, [THRESHOLDS.stuckLeaseS])
  const expiredWorker = await one(q.expired_worker_leases, [THRESHOLDS.stuckLeaseS])
  const born = await one(q.leases_born_expired)
  const live = await one(q.live_leases)
  const checks = [
    depthCheck('orchestrator_queue', orch),
    depthCheck('worker_queue', worker),
    oldestReadyCheck(orch.oldest, worker.oldest),
    attemptsCheck(attempts, maxAttempts, {
      orchestrator: num(orch.max_attempt_count) ?? 0,
      worker: num(worker.max_attempt_count) ?? 0,
    }),
    expiredLeasesCheck(kind, expiredInst, expiredWorker),
    bornExpiredCheck(kind, born),
    liveLeaseCheck(kind, live),
  ]
  if (q.dead_letters) checks.push(deadLettersCheck(await one(q.dead_letters)))
  return checks
}

module.exports = { snapshotChecks, check, THRESHOLDS }
