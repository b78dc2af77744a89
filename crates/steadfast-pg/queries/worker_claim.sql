-- Claim the oldest eligible work item in one statement, and return its lock token. SKIP
-- LOCKED: rows another transaction holds are passed over, never waited for. An expired
-- lease is eligible only after its redelivery backoff. Session items are eligible when
-- their session is unowned (or its lease expired) or owned by $8; with $8 NULL only
-- non-session items are.
-- Nothing claimed: one row with id NULL and, if $9, the ms until the next delayed item
-- becomes visible (NULL: none), so an empty long poll costs one statement.
-- $1 token prefix (the token is the prefix and the id: functions/token_work_item.sql),
-- $2 lock ms, $3 jitter, $4 backoff base ms, $5 backoff cap ms,
-- $6 tag mode (0 untagged only, 1 listed tags, 2 untagged or listed, 3 any), $7 tags,
-- $8 session owner, $9 whether to read the next visible time, $10 whether a claimed row
-- reads more_ready (below) and the next visible time.
WITH claimed AS (
    UPDATE __SCHEMA__.worker_queue AS w
    SET lock_token = $1 || w.id,
        locked_at = clock_timestamp(),
        locked_until = clock_timestamp() + $2::float8 * interval '1 millisecond',
        attempt_count = w.attempt_count + 1,
        backoff_jitter = $3
    WHERE w.id = (
        SELECT q.id
        FROM __SCHEMA__.worker_queue AS q
        LEFT JOIN __SCHEMA__.sessions AS s
               ON s.session_id = q.session_id AND s.locked_until > clock_timestamp()
        WHERE q.visible_at <= clock_timestamp()
          AND (q.lock_token IS NULL
               OR q.locked_until
                  + LEAST($5::float8, $4::float8 * power(2, LEAST(GREATEST(q.attempt_count, 1) - 1, 62)))
                    * (1 + q.backoff_jitter) * interval '1 millisecond' <= clock_timestamp())
          AND CASE $6::int
                  WHEN 0 THEN q.tag IS NULL
                  WHEN 1 THEN q.tag = ANY($7::text[])
                  WHEN 2 THEN q.tag IS NULL OR q.tag = ANY($7::text[])
                  ELSE true
              END
          AND (q.session_id IS NULL
               OR ($8::text IS NOT NULL AND (s.session_id IS NULL OR s.worker_id = $8::text)))
        ORDER BY q.visible_at, q.id
        LIMIT 1
        FOR UPDATE OF q SKIP LOCKED
    )
    RETURNING w.id, w.work_item, w.attempt_count, w.session_id, w.lock_token
),
next_visible AS (
    SELECT (EXTRACT(EPOCH FROM (min(q.visible_at) - clock_timestamp())) * 1000)::float8 AS ms
    FROM __SCHEMA__.worker_queue AS q
    WHERE q.visible_at > clock_timestamp()
)
SELECT c.id, c.work_item, c.attempt_count, c.session_id, c.lock_token,
       CASE WHEN $10::boolean THEN (SELECT ms FROM next_visible) END AS next_visible_ms,
       -- Whether any other item looked ready: unlocked or its lease expired, whatever its
       -- tag or session, so that a fetch passing a wake-up on (src/polling.rs) never
       -- misses work the next could take. This snapshot predates the claim: hence the id.
       CASE WHEN $10::boolean THEN EXISTS (
           SELECT 1
           FROM __SCHEMA__.worker_queue AS q
           WHERE q.visible_at <= clock_timestamp()
             AND q.id <> c.id
             AND (q.lock_token IS NULL OR q.locked_until <= clock_timestamp())
       ) END AS more_ready
FROM claimed AS c
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL,
       CASE WHEN $9::boolean THEN (SELECT ms FROM next_visible) END,
       NULL
WHERE NOT EXISTS (SELECT 1 FROM claimed)
