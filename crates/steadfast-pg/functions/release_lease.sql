-- Release an instance's lease (after an ack, abandon, give-back or poison disposition, with
-- the lease row held) and settle its ready_at: what the released turn consumed is gone,
-- what it delayed is later, so the instance is a claim candidate exactly when its next
-- message is visible (unless an enqueue is in flight: see settle_ready_at).
CREATE OR REPLACE FUNCTION __SCHEMA__.release_lease(p_instance text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.instance_leases
    SET lock_token = NULL, locked_until = NULL, locked_at = NULL, attempt_count = 0,
        backoff_jitter = 0
    WHERE instance_id = p_instance;
    PERFORM __SCHEMA__.settle_ready_at(p_instance);
END;
$$;
