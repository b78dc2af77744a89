-- doctor: the backends of this database waiting for a lock, and what ties each to the
-- schema: $1 is its oid, $2 its lower-case name followed by a dot, looked for in the waiting
-- query. Rows: pid, locktype, mode, application_name, waiting_s, on_tables, names_schema,
-- advisory_key (the bigint key of an advisory lock), blocked_by. pg_locks.waitstart is read
-- through to_jsonb because servers before PostgreSQL 14 do not have it.
WITH n AS (SELECT clock_timestamp() AS t),
rels AS (SELECT oid FROM pg_catalog.pg_class WHERE relnamespace = $1)
SELECT l.pid, l.locktype, l.mode, a.application_name,
       extract(epoch FROM (n.t - COALESCE((to_jsonb(l) ->> 'waitstart')::timestamptz,
                                          a.query_start, a.state_change)))::float8 AS waiting_s,
       (l.relation IN (SELECT oid FROM rels)
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_locks AS g
                   WHERE g.pid = l.pid AND g.granted AND g.relation IN (SELECT oid FROM rels))) AS on_tables,
       COALESCE(strpos(lower(a.query), $2) > 0
                OR strpos(lower(a.query), '"' || rtrim($2, '.') || '".') > 0, false) AS names_schema,
       CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
            THEN ((l.classid::int8 << 32) | l.objid::int8)::text END AS advisory_key,
       pg_catalog.pg_blocking_pids(l.pid) AS blocked_by
FROM pg_catalog.pg_locks AS l CROSS JOIN n
LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid = l.pid
WHERE NOT l.granted AND l.pid <> pg_catalog.pg_backend_pid()
  AND (a.datname IS NULL OR a.datname = current_database())
