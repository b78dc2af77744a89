-- The one place an instance lease is stamped: it starts now by the database clock and
-- lasts p_lock_ms. Returns the milliseconds left, NULL if the lease row is gone.
CREATE OR REPLACE FUNCTION __SCHEMA__.stamp_lease(
    p_instance text, p_token text, p_lock_ms float8, p_attempt integer, p_jitter real
) RETURNS float8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_left float8;
BEGIN
    UPDATE __SCHEMA__.instance_leases
    SET lock_token = p_token,
        locked_at = clock_timestamp(),
        locked_until = clock_timestamp() + p_lock_ms * interval '1 millisecond',
        attempt_count = p_attempt,
        backoff_jitter = p_jitter
    WHERE instance_id = p_instance
    RETURNING (EXTRACT(EPOCH FROM (locked_until - clock_timestamp())) * 1000)::float8
    INTO v_left;
    RETURN v_left;
END;
$$;
