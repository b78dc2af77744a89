-- Milliseconds until the next delayed work item becomes visible (NULL if none).
SELECT (EXTRACT(EPOCH FROM (min(visible_at) - clock_timestamp())) * 1000)::float8
FROM __SCHEMA__.worker_queue
WHERE visible_at > clock_timestamp()
