-- Hold a just-claimed work item's row for settling it ($1 lock token); no row when the
-- item is gone (cancelled) or its lease was taken over.
SELECT id
FROM __SCHEMA__.worker_queue
WHERE lock_token = $1
FOR UPDATE
