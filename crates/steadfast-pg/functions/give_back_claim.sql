-- Undo a claim whose fetch was cancelled before the runtime got the item (a runtime
-- shutting down, a caller's timeout): the lease is released and the claimed messages get
-- their attempt back, as if the claim had never happened, so the instance is neither
-- held for a lease nobody renews nor one attempt closer to poison. Only while the token
-- is still the lease's; a row held by another lease holder is skipped (the lease then
-- runs out as usual).
-- Returns whether the claim was given back.
CREATE OR REPLACE FUNCTION __SCHEMA__.give_back_claim(p_token text)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_instance text;
    v_tagged_until timestamptz;
BEGIN
    SELECT l.instance_id, l.tagged_until INTO v_instance, v_tagged_until
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = __SCHEMA__.token_instance(p_token) AND l.lock_token = p_token
    FOR NO KEY UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE __SCHEMA__.orchestrator_queue AS q
    SET lock_token = NULL, attempt_count = GREATEST(q.attempt_count - 1, 0)
    WHERE __SCHEMA__.tagged_by_claim(q.instance_id, q.visible_at, q.lock_token,
                                     v_instance, p_token, v_tagged_until);
    PERFORM __SCHEMA__.release_lease(v_instance);
    RETURN true;
END;
$$;
