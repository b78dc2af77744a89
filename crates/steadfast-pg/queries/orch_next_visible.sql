-- Milliseconds until the next delayed ready orchestrator message becomes visible (NULL if
-- none). Waiting messages (migration 0006) make no work when they become visible.
SELECT (EXTRACT(EPOCH FROM (min(visible_at) - clock_timestamp())) * 1000)::float8
FROM __SCHEMA__.orchestrator_queue
WHERE visible_at > clock_timestamp() AND NOT waiting
