-- p_base_ms and p_cap_ms, then p_tagged_until were added: the signatures before them must
-- not stay behind as overloads.
DROP FUNCTION IF EXISTS __SCHEMA__.stamp_lease(text, text, float8, integer, real);
DROP FUNCTION IF EXISTS __SCHEMA__.stamp_lease(text, text, float8, integer, real, float8,
                                               float8);

-- The one place an instance lease is stamped: it starts now by the database clock and
-- lasts p_lock_ms. Returns the milliseconds left, NULL if the lease row is gone.
-- p_tagged_until: the latest visible_at among the messages the claim tagged (migration
-- 0007), NULL to keep the row's (a restamp).
--
-- A redelivery (p_attempt above 1: an earlier lease of these messages ran out or was given
-- up) also moves ready_at to when this lease, should it run out too, becomes claimable
-- again (functions/redelivery_at.sql, with the claim's backoff p_base_ms and p_cap_ms), and
-- a restamp (no backoff given) moves it on with the lease's end
-- (functions/moved_ready_at.sql): so instances whose turns keep crashing or hanging, and
-- back off for longer each time, are no claim candidates meanwhile, and the claim's scan,
-- which walks instance_leases_ready_idx up to now, does not pass over all of them on every
-- call. A first attempt leaves ready_at alone, so that its stamp stays a HOT update
-- (tests/hot_updates.rs): the claims walk live first leases, which the dispatchers' number
-- bounds. Raising ready_at needs no fence (functions/settle_ready_at.sql): until the lease
-- ends nothing can claim the instance, and every way it ends early goes through
-- release_lease, which settles ready_at or lowers it to now.
CREATE OR REPLACE FUNCTION __SCHEMA__.stamp_lease(
    p_instance text, p_token text, p_lock_ms float8, p_attempt integer, p_jitter real,
    p_base_ms float8, p_cap_ms float8, p_tagged_until timestamptz
) RETURNS float8 LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_until timestamptz := clock_timestamp() + p_lock_ms * interval '1 millisecond';
    v_left float8;
BEGIN
    UPDATE __SCHEMA__.instance_leases AS l
    SET lock_token = p_token,
        locked_at = clock_timestamp(),
        locked_until = v_until,
        attempt_count = p_attempt,
        backoff_jitter = p_jitter,
        tagged_until = COALESCE(p_tagged_until, l.tagged_until),
        ready_at = CASE
            WHEN p_base_ms IS NULL OR COALESCE(p_attempt, 1) <= 1
                THEN __SCHEMA__.moved_ready_at(l.ready_at, p_attempt, l.locked_until, v_until)
            ELSE __SCHEMA__.redelivery_at(v_until, p_attempt, p_jitter, p_base_ms, p_cap_ms)
        END
    WHERE l.instance_id = p_instance
    RETURNING (EXTRACT(EPOCH FROM (l.locked_until - clock_timestamp())) * 1000)::float8
    INTO v_left;
    RETURN v_left;
END;
$$;
