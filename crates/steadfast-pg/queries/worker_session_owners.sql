-- The owners, other than $1, of live sessions that hold unleased items ready now: a
-- woken worker fetch that claimed nothing wakes those of them waiting in this process
-- (src/session_wakes.rs). It looks at the 64 items that became visible last, leased or
-- not (a backward walk of worker_queue_ready_idx that stops there): the wake-up was for
-- one of them.
SELECT DISTINCT s.worker_id
FROM (
    SELECT q.session_id, q.lock_token
    FROM __SCHEMA__.worker_queue AS q
    WHERE q.visible_at <= now()
    ORDER BY q.visible_at DESC, q.id DESC
    LIMIT 64
) AS recent
JOIN __SCHEMA__.sessions AS s
  ON s.session_id = recent.session_id AND s.locked_until > now()
WHERE recent.lock_token IS NULL
  AND s.worker_id IS DISTINCT FROM $1
