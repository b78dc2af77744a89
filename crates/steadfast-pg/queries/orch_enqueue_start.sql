-- A start enqueued as orch_enqueue enqueues it ($1..$4, one message), and whether its
-- instance ($5) had run a turn before (has an `instances` row as this statement began):
-- only the start of an instance that has not run is watched for its end
-- (src/watched_starts.rs).
SELECT EXISTS (SELECT 1 FROM __SCHEMA__.instances AS i WHERE i.instance_id = $5)
FROM __SCHEMA__.enqueue_orchestrator($1, $2, $3, $4)
