-- Undo a worker claim whose fetch was cancelled before the runtime got the item, or whose
-- session could not be claimed: the lease is released and the attempt given back, with
-- the item's place in the queue (visible_at) kept. Only while the token is still the
-- item's. $1 lock token. Returns whether a claim was given back.
WITH given AS (
    UPDATE __SCHEMA__.worker_queue
    SET lock_token = NULL,
        locked_until = NULL,
        locked_at = NULL,
        backoff_jitter = 0,
        attempt_count = GREATEST(attempt_count - 1, 0)
    WHERE id = __SCHEMA__.token_work_item($1) AND lock_token = $1
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM given)
