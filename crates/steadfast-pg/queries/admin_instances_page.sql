-- One page of instances, newest first, after a keyset cursor (src/instance_pages.rs):
-- $1 the cursor's creation time (ISO 8601 UTC text; 'infinity' for the first page),
-- $2 its instance id, $3 statuses of the current execution (NULL = any), $4 orchestration
-- name (NULL = any), $5 parent instance (NULL = any), $6 created at or after (epoch ms,
-- NULL = any), $7 created before (epoch ms, NULL = any), $8 rows to return, $9 only this
-- instance (NULL = any; get_instance_info reads one instance's row with it).
-- Times are epoch milliseconds; updated_at is the latest change known to the instance or
-- its current execution: its metadata's last write, the execution's start or end, or its
-- latest history event (the last turn that wrote any; turns leave the instance row alone
-- unless they change it, functions/write_turn.sql). cursor_at: the row's creation time as
-- a cursor holds it.
SELECT i.instance_id,
       i.orchestration_name,
       COALESCE(i.orchestration_version, 'unknown') AS orchestration_version,
       i.current_execution_id,
       COALESCE(e.status, 'Unknown') AS status,
       e.output,
       (EXTRACT(EPOCH FROM i.created_at) * 1000)::int8 AS created_at_ms,
       (EXTRACT(EPOCH FROM GREATEST(
            i.updated_at, e.started_at, e.completed_at,
            (SELECT h.created_at FROM __SCHEMA__.history AS h
             WHERE h.instance_id = i.instance_id AND h.execution_id = i.current_execution_id
             ORDER BY h.event_id DESC LIMIT 1))) * 1000)::int8
           AS updated_at_ms,
       i.parent_instance_id,
       to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
FROM __SCHEMA__.instances AS i
LEFT JOIN __SCHEMA__.executions AS e
       ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE (i.created_at, i.instance_id) < ($1::text::timestamptz, $2::text)
  AND ($3::text[] IS NULL OR COALESCE(e.status, 'Unknown') = ANY ($3::text[]))
  AND ($4::text IS NULL OR i.orchestration_name = $4::text)
  AND ($5::text IS NULL OR i.parent_instance_id = $5::text)
  AND ($6::int8 IS NULL OR i.created_at >= to_timestamp($6::int8 / 1000.0))
  AND ($7::int8 IS NULL OR i.created_at < to_timestamp($7::int8 / 1000.0))
  AND ($9::text IS NULL OR i.instance_id = $9::text)
ORDER BY i.created_at DESC, i.instance_id DESC
LIMIT $8
