-- Start a claimed lease again from now, for a claim whose reply took long to reach and
-- decode in the client. Only while the token is still the lease's. Never waits: the row
-- is taken FOR NO KEY UPDATE SKIP LOCKED. When another transaction holds the row for a
-- moment (an enqueue lowering ready_at, another claim's try, the ready_at fence), the
-- lease is kept as the claim stamped it: the milliseconds it has left are returned, so the
-- claim is still handed out rather than left leased to nobody with its attempt counted.
-- NULL when the token no longer holds a live lease.
CREATE OR REPLACE FUNCTION __SCHEMA__.restamp_lease(p_token text, p_lock_ms float8)
RETURNS float8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_lease record;
BEGIN
    SELECT l.instance_id, l.attempt_count, l.backoff_jitter INTO v_lease
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = __SCHEMA__.token_instance(p_token) AND l.lock_token = p_token
    FOR NO KEY UPDATE SKIP LOCKED;
    IF FOUND THEN
        RETURN __SCHEMA__.stamp_lease(v_lease.instance_id, p_token, p_lock_ms,
                                      v_lease.attempt_count, v_lease.backoff_jitter,
                                      NULL, NULL, NULL);
    END IF;
    RETURN (SELECT (EXTRACT(EPOCH FROM (l.locked_until - clock_timestamp())) * 1000)::float8
            FROM __SCHEMA__.instance_leases AS l
            WHERE l.instance_id = __SCHEMA__.token_instance(p_token)
              AND l.lock_token = p_token AND l.locked_until > clock_timestamp());
END;
$$;
