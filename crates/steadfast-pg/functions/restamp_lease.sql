-- Start a claimed lease again from now, for a claim whose reply took long to reach and
-- decode in the client. Only while the token is still the lease's and no other lease
-- holder has the row (FOR NO KEY UPDATE SKIP LOCKED: never waits, and an enqueue's KEY
-- SHARE lock, migration 0009, does not stop it). NULL when not restamped.
CREATE OR REPLACE FUNCTION __SCHEMA__.restamp_lease(p_token text, p_lock_ms float8)
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    v_lease record;
BEGIN
    SELECT l.instance_id, l.attempt_count, l.backoff_jitter INTO v_lease
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.lock_token = p_token
    FOR NO KEY UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN __SCHEMA__.stamp_lease(v_lease.instance_id, p_token, p_lock_ms,
                                  v_lease.attempt_count, v_lease.backoff_jitter);
END;
$$;
