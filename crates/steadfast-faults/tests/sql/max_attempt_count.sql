-- Highest attempt count of any message: still queued, or already dead-lettered.
SELECT greatest(
    (SELECT coalesce(max(attempt_count), 0) FROM __SCHEMA__.orchestrator_queue),
    (SELECT coalesce(max(attempt_count), 0) FROM __SCHEMA__.worker_queue),
    (SELECT coalesce(max(attempt_count), 0) FROM __SCHEMA__.dead_letters)
)::int8
