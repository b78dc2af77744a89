-- Claim the oldest eligible work item in one statement, and return its lock token. SKIP
-- LOCKED: rows another transaction holds are passed over, never waited for. An expired
-- lease is eligible only after its redelivery backoff. Session items are eligible when
-- their session is unowned (or its lease expired) or owned by p_session_owner; with it
-- NULL only non-session items are.
-- Nothing claimed: id NULL and, if p_next_visible, the ms until the next delayed item
-- becomes visible (NULL: none), so an empty long poll costs one statement.
-- p_token_prefix: the token is the prefix and the id (functions/token_work_item.sql);
-- p_tag_mode: 0 untagged only, 1 listed tags, 2 untagged or listed, 3 any;
-- p_tell_more: whether a claimed row reads more_ready (below) and the next visible time.
--
-- A function, not a named query, for its plan: as a prepared statement PostgreSQL kept
-- planning it again on every call (a custom plan folds the tag mode and session owner),
-- ~0.5 ms a claim in bench/'s stress workload, more than it took to run; and without
-- prepared statements (session-free mode) every call is planned anyway. Here its plan is
-- made once per connection (force_generic_plan, as every function here).
CREATE OR REPLACE FUNCTION __SCHEMA__.claim_work_item(
    p_token_prefix text, p_lock_ms float8, p_jitter real, p_base_ms float8, p_cap_ms float8,
    p_tag_mode integer, p_tags text[], p_session_owner text,
    p_next_visible boolean, p_tell_more boolean,
    OUT id bigint, OUT work_item text, OUT attempt_count integer, OUT session_id text,
    OUT lock_token text, OUT next_visible_ms float8, OUT more_ready boolean
) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
#variable_conflict use_column
DECLARE
    -- Compared with visible_at as a value, not as clock_timestamp() (volatile): only then
    -- is it an index condition, so the walk of worker_queue_ready_idx stops at the first
    -- item not visible yet instead of passing over every delayed item on every claim.
    v_now timestamptz := clock_timestamp();
BEGIN
    WITH claimed AS (
        UPDATE __SCHEMA__.worker_queue AS w
        SET lock_token = p_token_prefix || w.id,
            locked_at = clock_timestamp(),
            locked_until = clock_timestamp() + p_lock_ms * interval '1 millisecond',
            attempt_count = w.attempt_count + 1,
            backoff_jitter = p_jitter
        WHERE w.id = (
            SELECT q.id
            FROM __SCHEMA__.worker_queue AS q
            LEFT JOIN __SCHEMA__.sessions AS s
                   ON s.session_id = q.session_id AND s.locked_until > clock_timestamp()
            WHERE q.visible_at <= v_now
              AND (q.lock_token IS NULL
                   OR __SCHEMA__.redelivery_at(q.locked_until, q.attempt_count,
                                               q.backoff_jitter, p_base_ms, p_cap_ms)
                      <= clock_timestamp())
              AND CASE p_tag_mode
                      WHEN 0 THEN q.tag IS NULL
                      WHEN 1 THEN q.tag = ANY (p_tags)
                      WHEN 2 THEN q.tag IS NULL OR q.tag = ANY (p_tags)
                      ELSE true
                  END
              AND (q.session_id IS NULL
                   OR (p_session_owner IS NOT NULL
                       AND (s.session_id IS NULL OR s.worker_id = p_session_owner)))
            ORDER BY q.visible_at, q.id
            LIMIT 1
            FOR UPDATE OF q SKIP LOCKED
        )
        RETURNING w.id, w.work_item, w.attempt_count, w.session_id, w.lock_token
    ),
    next_visible AS (
        SELECT (EXTRACT(EPOCH FROM (min(q.visible_at) - clock_timestamp())) * 1000)::float8
                   AS ms
        FROM __SCHEMA__.worker_queue AS q
        WHERE q.visible_at > v_now
    )
    SELECT c.id, c.work_item, c.attempt_count, c.session_id, c.lock_token,
           CASE WHEN p_tell_more THEN (SELECT n.ms FROM next_visible AS n) END,
           -- Whether any other item looked ready: unlocked or its lease expired, whatever
           -- its tag or session, so that a fetch passing a wake-up on (src/polling.rs)
           -- never misses work the next could take. This snapshot predates the claim:
           -- hence the id.
           CASE WHEN p_tell_more THEN EXISTS (
               SELECT 1
               FROM __SCHEMA__.worker_queue AS q
               WHERE q.visible_at <= v_now
                 AND q.id <> c.id
                 AND (q.lock_token IS NULL OR q.locked_until <= clock_timestamp())
           ) END
    INTO id, work_item, attempt_count, session_id, lock_token, next_visible_ms, more_ready
    FROM claimed AS c
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL,
           CASE WHEN p_next_visible THEN (SELECT n.ms FROM next_visible AS n) END,
           NULL
    WHERE NOT EXISTS (SELECT 1 FROM claimed);
END;
$$;
