'use strict'

// doctor's statements for an upstream duroxide-pg schema (not steadfast's, so they live here
// and not with the provider's named queries). They return the same columns as the
// steadfast ones of the same name (queries/doctor_<name>.sql) and use the same __SCHEMA__
// placeholder. duroxide-pg's locked_until / locked_at are BIGINT epoch milliseconds written
// from the caller's clock; an instance is held while its instance_locks row is live.

const { STEADFAST_TEMPLATES } = require('./queries')

/** The tables whose presence names a duroxide-pg schema. */
const SIGNATURE = Object.freeze(['orchestrator_queue', 'instance_locks'])

const NOW = `n AS (SELECT x.t, (extract(epoch FROM x.t) * 1000)::float8 AS ms
              FROM (SELECT clock_timestamp() AS t) AS x)`

/**
 * Row sources joined with `n`: id, instance_id, visible_at, attempt_count, has_token,
 * lease_until (timestamptz or NULL), leased (a live lease holds the message). Worker rows of
 * versions before activity identity have no instance_id / activity_id (`workerColumns`).
 */
function rowSources(workerColumns) {
  const wInstance = workerColumns.has('instance_id') ? 'w.instance_id' : 'NULL::text'
  const wActivity = workerColumns.has('activity_id') ? 'w.activity_id' : 'NULL::bigint'
  return {
    orchRows: `SELECT q.id, q.instance_id, q.visible_at, q.attempt_count,
                      (il.lock_token IS NOT NULL) AS has_token,
                      to_timestamp(il.locked_until / 1000.0) AS lease_until,
                      COALESCE(il.locked_until > n.ms, false) AS leased
               FROM __SCHEMA__.orchestrator_queue AS q CROSS JOIN n
               LEFT JOIN __SCHEMA__.instance_locks AS il ON il.instance_id = q.instance_id`,
    workerRows: `SELECT w.id, ${wInstance} AS instance_id, ${wActivity} AS activity_id, w.visible_at, w.attempt_count,
                        (w.lock_token IS NOT NULL) AS has_token,
                        to_timestamp(w.locked_until / 1000.0) AS lease_until,
                        (w.lock_token IS NOT NULL AND w.locked_until > n.ms) AS leased
                 FROM __SCHEMA__.worker_queue AS w CROSS JOIN n`,
    leases: `SELECT instance_id, lock_token, to_timestamp(locked_until / 1000.0) AS until_ts,
                    to_timestamp(locked_at / 1000.0) AS at_ts
             FROM __SCHEMA__.instance_locks`,
  }
}

/** Both queues, one row each: see queries/doctor_queues.sql for the columns. */
function queuesSql(d) {
  return `WITH ${NOW},
    r AS (SELECT 'orchestrator' AS queue, id, instance_id, visible_at, attempt_count, leased FROM (${d.orchRows}) AS o
          UNION ALL
          SELECT 'worker', id, instance_id, visible_at, attempt_count, leased FROM (${d.workerRows}) AS w),
    oldest AS (SELECT DISTINCT ON (queue) queue, id::text AS id, instance_id, attempt_count,
                      extract(epoch FROM (n.t - visible_at))::float8 AS age_s
               FROM r CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
               ORDER BY queue, visible_at, id)
    SELECT k.queue, count(r.id)::float8 AS total,
           count(r.id) FILTER (WHERE NOT r.leased AND r.visible_at <= n.t)::float8 AS ready,
           count(r.id) FILTER (WHERE NOT r.leased AND r.visible_at > n.t)::float8 AS delayed,
           count(r.id) FILTER (WHERE r.leased)::float8 AS leased,
           count(DISTINCT r.instance_id)::float8 AS instances,
           max(r.attempt_count)::float8 AS max_attempt_count,
           (SELECT row_to_json(o) FROM oldest AS o WHERE o.queue = k.queue) AS oldest
    FROM (VALUES ('orchestrator'), ('worker')) AS k(queue) CROSS JOIN n
    LEFT JOIN r ON r.queue = k.queue
    GROUP BY k.queue, n.t ORDER BY k.queue`
}

/**
 * The duroxide-pg templates, by the names of their steadfast counterparts. `tables` maps
 * the schema's tables to their columns (name to type).
 */
function duroxideTemplates(tables) {
  const d = rowSources(tables.get('worker_queue') || new Map())
  const templates = {
    queues: queuesSql(d),

    // $1: seconds after which an expired lock with work still queued counts as stuck.
    expired_instance_leases: `WITH ${NOW}, e AS (
        SELECT L.instance_id, L.until_ts,
               extract(epoch FROM (n.t - L.until_ts))::float8 AS expired_s,
               EXISTS (SELECT 1 FROM __SCHEMA__.orchestrator_queue AS q WHERE q.instance_id = L.instance_id) AS has_work
        FROM (${d.leases}) AS L CROSS JOIN n
        WHERE L.until_ts <= n.t)
      SELECT count(*)::float8 AS expired,
             count(*) FILTER (WHERE has_work)::float8 AS with_work,
             count(*) FILTER (WHERE has_work AND expired_s >= $1)::float8 AS stuck,
             max(expired_s) AS oldest_s,
             (SELECT json_agg(x) FROM (SELECT instance_id, expired_s, has_work FROM e
                                       ORDER BY until_ts LIMIT 5) AS x) AS top
      FROM e`,
    expired_worker_leases: `WITH ${NOW}, e AS (
        SELECT id, instance_id, activity_id, attempt_count, lease_until,
               extract(epoch FROM (n.t - lease_until))::float8 AS expired_s
        FROM (${d.workerRows}) AS w CROSS JOIN n
        WHERE has_token AND lease_until <= n.t)
      SELECT count(*)::float8 AS expired,
             count(*) FILTER (WHERE expired_s >= $1)::float8 AS stuck,
             max(expired_s) AS oldest_s,
             (SELECT json_agg(x) FROM (SELECT id::text AS id, instance_id, activity_id, attempt_count, expired_s
                                       FROM e ORDER BY lease_until LIMIT 5) AS x) AS top
      FROM e`,
    leases_born_expired: `WITH b AS (
        SELECT instance_id, at_ts, (extract(epoch FROM (until_ts - at_ts)) * 1000)::float8 AS lease_ms
        FROM (${d.leases}) AS L WHERE until_ts <= at_ts)
      SELECT count(*)::float8 AS count,
             (SELECT json_agg(x) FROM (SELECT instance_id, lease_ms FROM b ORDER BY at_ts DESC LIMIT 5) AS x) AS top
      FROM b`,
    live_leases: `WITH ${NOW}, live AS (
        SELECT L.instance_id, L.at_ts, L.until_ts FROM (${d.leases}) AS L CROSS JOIN n WHERE L.until_ts > n.t)
      SELECT (SELECT count(*) FROM live)::float8 AS live,
             (SELECT count(*) FROM (${d.workerRows}) AS w WHERE leased)::float8 AS worker_live,
             o.instance_id, extract(epoch FROM (n.t - o.at_ts))::float8 AS held_s,
             extract(epoch FROM (o.until_ts - n.t))::float8 AS remaining_s
      FROM n LEFT JOIN LATERAL (SELECT * FROM live ORDER BY at_ts LIMIT 1) AS o ON true`,

    // $1 max_attempts; see doctor_attempts_over_max.sql for "unsettled".
    attempts_over_max: `WITH ${NOW}, off AS (
        SELECT 'orchestrator' AS queue, instance_id, attempt_count, has_token, lease_until, leased
        FROM (${d.orchRows}) AS o WHERE attempt_count > $1
        UNION ALL
        SELECT 'worker', COALESCE(instance_id, '(unknown)'), attempt_count, has_token, lease_until, leased
        FROM (${d.workerRows}) AS w WHERE attempt_count > $1)
      SELECT count(*)::float8 AS messages,
             count(DISTINCT (queue, instance_id))::float8 AS instances,
             max(attempt_count)::float8 AS max_attempt_count,
             count(*) FILTER (WHERE attempt_count > $1 + 1 OR NOT leased)::float8 AS unsettled,
             (SELECT json_agg(x) FROM (
                 SELECT f.queue, f.instance_id, max(f.attempt_count) AS attempt_count, count(*) AS messages,
                        bool_or(f.leased) AS leased, bool_or(f.has_token) AS has_token,
                        extract(epoch FROM (min(n.t) - max(f.lease_until)))::float8 AS lease_expired_s
                 FROM off AS f CROSS JOIN n
                 GROUP BY f.queue, f.instance_id
                 ORDER BY max(f.attempt_count) DESC, f.instance_id LIMIT 5) AS x) AS top
      FROM off`,

    // $1 list cap, $2 epoch ms. A lock's locked_at is the caller's clock, so the waits of the
    // locks stamped since $2 come from it.
    sample_tick: `WITH ${NOW},
        ro AS (SELECT id, (extract(epoch FROM visible_at) * 1000)::float8 AS vis_ms
               FROM (${d.orchRows}) AS o CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
               ORDER BY visible_at, id LIMIT $1),
        rw AS (SELECT id, (extract(epoch FROM visible_at) * 1000)::float8 AS vis_ms
               FROM (${d.workerRows}) AS w CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
               ORDER BY visible_at, id LIMIT $1),
        claims AS (SELECT il.lock_token AS token, il.instance_id,
                          (SELECT max(il.locked_at - extract(epoch FROM q.visible_at) * 1000)::float8
                           FROM __SCHEMA__.orchestrator_queue AS q
                           WHERE q.lock_token = il.lock_token AND q.attempt_count = 1) AS wait_ms
                   FROM __SCHEMA__.instance_locks AS il
                   WHERE il.locked_at >= $2::float8)
      SELECT n.ms AS now_ms,
             (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM ro) AS orch,
             (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM rw) AS worker,
             (SELECT COALESCE(json_agg(json_build_array(token, instance_id, wait_ms)), '[]') FROM claims) AS claims
      FROM n`,

    // Reads only the two queues' id columns, which both layouts have.
    queue_counters: STEADFAST_TEMPLATES.queue_counters,

    // The keys of duroxide-pg's per-instance pg_advisory_xact_lock(hashtext(instance_id)).
    advisory_instances: `SELECT k.key::text AS key, i.instance_id
      FROM unnest($1::int8[]) AS k(key)
      JOIN LATERAL (
          SELECT ids.instance_id
          FROM (SELECT instance_id FROM __SCHEMA__.orchestrator_queue
                UNION SELECT instance_id FROM __SCHEMA__.instance_locks) AS ids
          WHERE hashtext(ids.instance_id)::int8 = k.key LIMIT 1) AS i ON true`,
  }
  if (tables.has('_duroxide_migrations')) {
    templates.schema_version = 'SELECT max(version)::float8 AS version FROM __SCHEMA__._duroxide_migrations'
  }
  return templates
}

/** Why `tables` cannot be read as duroxide-pg's, or null. */
function duroxideLayoutProblem(tables) {
  const t = tables.get('instance_locks').get('locked_until')
  return t === 'bigint' ? null : `instance_locks.locked_until is ${t}, expected bigint (epoch ms)`
}

module.exports = { SIGNATURE, duroxideTemplates, duroxideLayoutProblem }
