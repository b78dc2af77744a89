DELETE FROM __SCHEMA__.sessions AS s
WHERE s.locked_until < clock_timestamp()
  AND NOT EXISTS (SELECT 1 FROM __SCHEMA__.worker_queue AS w WHERE w.session_id = s.session_id)
