-- Remove every row of instances $1 except dead letters (kept as an audit trail).
-- The caller holds the instances' lease rows; deleting them also invalidates any lock
-- token handed out for these instances, so an in-flight ack cannot recreate them.
WITH dropped_history AS (
    DELETE FROM __SCHEMA__.history WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_executions AS (
    DELETE FROM __SCHEMA__.executions WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_orchestrator AS (
    DELETE FROM __SCHEMA__.orchestrator_queue WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_worker AS (
    DELETE FROM __SCHEMA__.worker_queue WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_leases AS (
    DELETE FROM __SCHEMA__.instance_leases WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_hints AS (
    DELETE FROM __SCHEMA__.ready_hints WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_kv AS (
    DELETE FROM __SCHEMA__.kv_store WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_kv_delta AS (
    DELETE FROM __SCHEMA__.kv_delta WHERE instance_id = ANY($1::text[]) RETURNING 1
), dropped_instances AS (
    DELETE FROM __SCHEMA__.instances WHERE instance_id = ANY($1::text[]) RETURNING 1
)
SELECT (SELECT count(*) FROM dropped_instances) AS instances,
       (SELECT count(*) FROM dropped_executions) AS executions,
       (SELECT count(*) FROM dropped_history) AS events,
       (SELECT count(*) FROM dropped_orchestrator) + (SELECT count(*) FROM dropped_worker)
           AS queue_messages
