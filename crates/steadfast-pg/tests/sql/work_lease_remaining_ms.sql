-- Milliseconds left on the live lease of the worker-queue item holding token $1 (by the database clock).
SELECT (EXTRACT(EPOCH FROM (locked_until - clock_timestamp())) * 1000)::float8
FROM __SCHEMA__.worker_queue
WHERE lock_token = $1
