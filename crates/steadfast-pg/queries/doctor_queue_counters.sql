-- doctor: how much each queue holds and how far its id sequence has advanced, read at the
-- start and end of sampling. $1: the schema's name (unquoted), to find the sequences. One
-- row: orch_total, worker_total, orch_seq, worker_seq. A sequence is read without nextval;
-- where doctor may not read it, the queue's highest id stands in.
WITH s AS (
    SELECT pg_catalog.pg_get_serial_sequence(format('%I.orchestrator_queue', $1::text), 'id')::regclass AS orch,
           pg_catalog.pg_get_serial_sequence(format('%I.worker_queue', $1::text), 'id')::regclass AS worker
)
SELECT (SELECT count(*) FROM __SCHEMA__.orchestrator_queue)::float8 AS orch_total,
       (SELECT count(*) FROM __SCHEMA__.worker_queue)::float8 AS worker_total,
       COALESCE(CASE WHEN pg_catalog.has_sequence_privilege(s.orch, 'SELECT, USAGE')
                     THEN pg_catalog.pg_sequence_last_value(s.orch) END,
                (SELECT max(id) FROM __SCHEMA__.orchestrator_queue), 0)::float8 AS orch_seq,
       COALESCE(CASE WHEN pg_catalog.has_sequence_privilege(s.worker, 'SELECT, USAGE')
                     THEN pg_catalog.pg_sequence_last_value(s.worker) END,
                (SELECT max(id) FROM __SCHEMA__.worker_queue), 0)::float8 AS worker_seq
FROM s
