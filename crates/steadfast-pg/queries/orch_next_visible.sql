-- Milliseconds until the next delayed orchestrator message becomes visible (NULL if none).
SELECT (EXTRACT(EPOCH FROM (min(visible_at) - clock_timestamp())) * 1000)::float8
FROM __SCHEMA__.orchestrator_queue
WHERE visible_at > clock_timestamp()
