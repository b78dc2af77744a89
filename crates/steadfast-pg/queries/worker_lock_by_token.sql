-- Hold a just-claimed work item's row for settling it ($1 lock token); no row when the
-- item is gone (cancelled) or its lease was taken over.
SELECT id
FROM __SCHEMA__.worker_queue
WHERE id = __SCHEMA__.token_work_item($1) AND lock_token = $1
FOR UPDATE
