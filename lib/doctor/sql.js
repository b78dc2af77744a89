'use strict'

// doctor's SQL, per provider. Read-only SELECTs over pg_catalog and the schema's tables: no
// FOR UPDATE/SHARE, no advisory locks, no writes. Every statement reads the database clock
// once (`n.t`, and `n.ms` in epoch milliseconds) so all its predicates agree.

const NOW = `n AS (SELECT x.t, (extract(epoch FROM x.t) * 1000)::float8 AS ms
              FROM (SELECT clock_timestamp() AS t) AS x)`

function quoteIdent(name) {
  return `"${String(name).replace(/"/g, '""')}"`
}

/**
 * Fragments that hide the two layouts' differences. Each `rows` fragment yields, joined with
 * `n`: id, instance_id, visible_at, attempt_count, has_token, lease_until (timestamptz or
 * NULL), leased (a live lease holds the message).
 */
function dialect(kind, schema, tables) {
  const S = quoteIdent(schema)
  if (kind === 'steadfast') {
    return {
      S,
      orchRows: `SELECT q.id, q.instance_id, q.visible_at, q.attempt_count,
                        (l.lock_token IS NOT NULL) AS has_token, l.locked_until AS lease_until,
                        (l.lock_token IS NOT NULL AND l.locked_until > n.t) AS leased
                 FROM ${S}.orchestrator_queue AS q CROSS JOIN n
                 LEFT JOIN ${S}.instance_leases AS l ON l.instance_id = q.instance_id`,
      workerRows: `SELECT w.id, w.instance_id, w.activity_id, w.visible_at, w.attempt_count,
                          (w.lock_token IS NOT NULL) AS has_token, w.locked_until AS lease_until,
                          (w.lock_token IS NOT NULL AND w.locked_until > n.t) AS leased
                   FROM ${S}.worker_queue AS w CROSS JOIN n`,
      // Instance leases that carry a token: until_ts and at_ts are timestamptz.
      leases: `SELECT instance_id, lock_token, locked_until AS until_ts, locked_at AS at_ts
               FROM ${S}.instance_leases WHERE lock_token IS NOT NULL`,
      leaseTable: 'instance_leases',
      // Instance leases stamped at or after $1 (epoch ms), with the wait of their first-delivery
      // messages: the lease stamp minus the message's visibility, both by the database clock.
      recentClaims: `SELECT l.lock_token AS token, l.instance_id,
                            (SELECT max(extract(epoch FROM (l.locked_at - q.visible_at)) * 1000)::float8
                             FROM ${S}.orchestrator_queue AS q
                             WHERE q.lock_token = l.lock_token AND q.attempt_count = 1) AS wait_ms
                     FROM ${S}.instance_leases AS l
                     WHERE l.lock_token IS NOT NULL AND l.locked_at >= to_timestamp($1::float8 / 1000)`,
      claimClock: 'database',
    }
  }
  // duroxide-pg: locked_until / locked_at are BIGINT epoch milliseconds written from the
  // caller's clock (p_now_ms); an instance is held while its instance_locks row is live.
  const workerCols = tables.get('worker_queue')
  const wInstance = workerCols.has('instance_id') ? 'w.instance_id' : 'NULL::text'
  const wActivity = workerCols.has('activity_id') ? 'w.activity_id' : 'NULL::bigint'
  return {
    S,
    orchRows: `SELECT q.id, q.instance_id, q.visible_at, q.attempt_count,
                      (il.lock_token IS NOT NULL) AS has_token,
                      to_timestamp(il.locked_until / 1000.0) AS lease_until,
                      COALESCE(il.locked_until > n.ms, false) AS leased
               FROM ${S}.orchestrator_queue AS q CROSS JOIN n
               LEFT JOIN ${S}.instance_locks AS il ON il.instance_id = q.instance_id`,
    workerRows: `SELECT w.id, ${wInstance} AS instance_id, ${wActivity} AS activity_id, w.visible_at, w.attempt_count,
                        (w.lock_token IS NOT NULL) AS has_token,
                        to_timestamp(w.locked_until / 1000.0) AS lease_until,
                        (w.lock_token IS NOT NULL AND w.locked_until > n.ms) AS leased
                 FROM ${S}.worker_queue AS w CROSS JOIN n`,
    leases: `SELECT instance_id, lock_token, to_timestamp(locked_until / 1000.0) AS until_ts,
                    to_timestamp(locked_at / 1000.0) AS at_ts
             FROM ${S}.instance_locks`,
    leaseTable: 'instance_locks',
    recentClaims: `SELECT il.lock_token AS token, il.instance_id,
                          (SELECT max(il.locked_at - extract(epoch FROM q.visible_at) * 1000)::float8
                           FROM ${S}.orchestrator_queue AS q
                           WHERE q.lock_token = il.lock_token AND q.attempt_count = 1) AS wait_ms
                   FROM ${S}.instance_locks AS il
                   WHERE il.locked_at >= $1::float8`,
    claimClock: 'caller',
  }
}

function queries(d) {
  const { S } = d
  const depth = (rows) => `WITH ${NOW}, r AS (${rows})
    SELECT count(*)::float8 AS total,
           count(*) FILTER (WHERE NOT leased AND visible_at <= n.t)::float8 AS ready,
           count(*) FILTER (WHERE NOT leased AND visible_at > n.t)::float8 AS delayed,
           count(*) FILTER (WHERE leased)::float8 AS leased,
           count(DISTINCT instance_id)::float8 AS instances,
           max(attempt_count)::float8 AS max_attempt_count
    FROM r CROSS JOIN n`
  const oldestReady = (rows) => `WITH ${NOW}, r AS (${rows})
    SELECT id::text AS id, instance_id, attempt_count,
           extract(epoch FROM (n.t - visible_at))::float8 AS age_s
    FROM r CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
    ORDER BY visible_at, id LIMIT 1`
  return {
    orchDepth: depth(d.orchRows),
    workerDepth: depth(d.workerRows),
    orchOldestReady: oldestReady(d.orchRows),
    workerOldestReady: oldestReady(d.workerRows),

    // $1: seconds after which an expired lease with work still queued counts as stuck.
    expiredLeases: `WITH ${NOW}, e AS (
        SELECT L.instance_id, L.until_ts,
               extract(epoch FROM (n.t - L.until_ts))::float8 AS expired_s,
               EXISTS (SELECT 1 FROM ${S}.orchestrator_queue AS q WHERE q.instance_id = L.instance_id) AS has_work
        FROM (${d.leases}) AS L CROSS JOIN n
        WHERE L.until_ts <= n.t)
      SELECT count(*)::float8 AS expired,
             count(*) FILTER (WHERE has_work)::float8 AS with_work,
             count(*) FILTER (WHERE has_work AND expired_s >= $1)::float8 AS stuck,
             max(expired_s) AS oldest_s,
             (SELECT json_agg(x) FROM (SELECT instance_id, expired_s, has_work FROM e
                                       ORDER BY until_ts LIMIT 5) AS x) AS top
      FROM e`,
    expiredWorker: `WITH ${NOW}, e AS (
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
    bornExpired: `SELECT count(*)::float8 AS count,
             (SELECT json_agg(x) FROM (SELECT instance_id,
                                              (extract(epoch FROM (until_ts - at_ts)) * 1000)::float8 AS lease_ms
                                       FROM (${d.leases}) AS b WHERE until_ts <= at_ts
                                       ORDER BY at_ts DESC LIMIT 5) AS x) AS top
      FROM (${d.leases}) AS L WHERE L.until_ts <= L.at_ts`,
    liveLeases: `WITH ${NOW}, live AS (
        SELECT L.instance_id, L.at_ts, L.until_ts FROM (${d.leases}) AS L CROSS JOIN n WHERE L.until_ts > n.t)
      SELECT (SELECT count(*) FROM live)::float8 AS live,
             (SELECT count(*) FROM (${d.workerRows}) AS w WHERE leased)::float8 AS worker_live,
             o.instance_id, extract(epoch FROM (n.t - o.at_ts))::float8 AS held_s,
             extract(epoch FROM (o.until_ts - n.t))::float8 AS remaining_s
      FROM n LEFT JOIN LATERAL (SELECT * FROM live ORDER BY at_ts LIMIT 1) AS o ON true`,

    // $1 max_attempts. An offender is "settled" when its attempt is max_attempts + 1 and a
    // live lease holds it: the runtime is failing it as poison right now.
    attempts: `WITH ${NOW}, off AS (
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

    deadLetters: `SELECT count(*)::float8 AS total,
             extract(epoch FROM (clock_timestamp() - max(dead_at)))::float8 AS newest_age_s,
             (SELECT json_agg(x) FROM (SELECT reason, count(*) AS count FROM ${S}.dead_letters
                                       GROUP BY reason ORDER BY count(*) DESC, reason LIMIT 10) AS x) AS by_reason,
             (SELECT json_agg(x) FROM (SELECT queue, count(*) AS count FROM ${S}.dead_letters
                                       GROUP BY queue ORDER BY queue) AS x) AS by_queue,
             (SELECT json_agg(x) FROM (SELECT id, queue, instance_id, reason, attempt_count, max_attempts,
                                              extract(epoch FROM (clock_timestamp() - dead_at))::float8 AS age_s
                                       FROM ${S}.dead_letters ORDER BY id DESC LIMIT 5) AS x) AS newest
      FROM ${S}.dead_letters`,

    schemaVersion:
      d.leaseTable === 'instance_leases'
        ? `SELECT max(version)::float8 AS version FROM ${S}.schema_migrations`
        : `SELECT max(version)::float8 AS version FROM ${S}._duroxide_migrations`,

    // One sampling tick: the oldest ready messages of each queue (capped at $1) and the
    // instance leases stamped since $2 (epoch ms).
    tick: `WITH ${NOW},
        ro AS (SELECT id, (extract(epoch FROM visible_at) * 1000)::float8 AS vis_ms
               FROM (${d.orchRows}) AS o CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
               ORDER BY visible_at, id LIMIT $1),
        rw AS (SELECT id, (extract(epoch FROM visible_at) * 1000)::float8 AS vis_ms
               FROM (${d.workerRows}) AS w CROSS JOIN n WHERE NOT leased AND visible_at <= n.t
               ORDER BY visible_at, id LIMIT $1)
      SELECT n.ms AS now_ms,
             (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM ro) AS orch,
             (SELECT COALESCE(json_agg(json_build_array(id::text, vis_ms) ORDER BY vis_ms, id), '[]') FROM rw) AS worker,
             (SELECT COALESCE(json_agg(json_build_array(c.token, c.instance_id, c.wait_ms)), '[]')
              FROM (${d.recentClaims.replace(/\$1/g, '$2')}) AS c) AS claims
      FROM n`,

    // Totals and enqueue counters at the start and end of sampling.
    // $1, $2: the qualified names of the two queue tables (for pg_get_serial_sequence).
    counters: `SELECT (SELECT count(*) FROM ${S}.orchestrator_queue)::float8 AS orch_total,
             (SELECT count(*) FROM ${S}.worker_queue)::float8 AS worker_total,
             pg_get_serial_sequence($1, 'id') AS orch_seq,
             pg_get_serial_sequence($2, 'id') AS worker_seq,
             (SELECT max(id) FROM ${S}.orchestrator_queue)::float8 AS orch_max_id,
             (SELECT max(id) FROM ${S}.worker_queue)::float8 AS worker_max_id`,
  }
}

/** Read a sequence's position (read-only: no nextval). `seq` comes from pg_get_serial_sequence. */
function sequencePositionSql(seq) {
  // pg_get_serial_sequence returns an already-quoted, schema-qualified name.
  return `SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::float8 AS pos FROM ${seq}`
}

/**
 * Backends of this database waiting for a lock, with what ties them to the schema.
 * $1 schema oid, $2 lower-case "schema." text to look for in the waiting query.
 */
function lockWaitersSql(hasWaitstart) {
  const since = hasWaitstart ? 'COALESCE(l.waitstart, a.query_start, a.state_change)' : 'COALESCE(a.query_start, a.state_change)'
  return `WITH ${NOW}, rels AS (SELECT oid FROM pg_catalog.pg_class WHERE relnamespace = $1)
    SELECT l.pid, l.locktype, l.mode, a.application_name,
           extract(epoch FROM (n.t - ${since}))::float8 AS waiting_s,
           (l.relation IN (SELECT oid FROM rels)
            OR EXISTS (SELECT 1 FROM pg_catalog.pg_locks AS g
                       WHERE g.pid = l.pid AND g.granted AND g.relation IN (SELECT oid FROM rels))) AS on_tables,
           COALESCE(strpos(lower(a.query), $2) > 0 OR strpos(lower(a.query), '"' || rtrim($2, '.') || '".') > 0, false)
             AS names_schema,
           CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
                THEN ((l.classid::int8 << 32) | l.objid::int8)::text END AS advisory_key,
           pg_catalog.pg_blocking_pids(l.pid) AS blocked_by
    FROM pg_catalog.pg_locks AS l CROSS JOIN n
    LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid = l.pid
    WHERE NOT l.granted AND l.pid <> pg_backend_pid()
      AND (a.datname IS NULL OR a.datname = current_database())`
}

/** Map advisory-lock keys to the schema's instance ids, the way duroxide-pg derives them. */
function advisoryInstancesSql(d) {
  return `SELECT k.key::text AS key, i.instance_id
    FROM unnest($1::int8[]) AS k(key)
    JOIN LATERAL (
        SELECT ids.instance_id
        FROM (SELECT instance_id FROM ${d.S}.orchestrator_queue
              UNION SELECT instance_id FROM ${d.S}.${d.leaseTable}) AS ids
        WHERE hashtext(ids.instance_id)::int8 = k.key LIMIT 1) AS i ON true`
}

module.exports = { dialect, queries, lockWaitersSql, advisoryInstancesSql, sequencePositionSql, quoteIdent }
