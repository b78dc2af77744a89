-- Release an instance's lease (after an ack, abandon, give-back or poison disposition, with
-- the lease row held) and settle its ready_at in the same row update: what the released
-- turn consumed is gone, what it delayed is later, so the instance is a claim candidate
-- exactly when its next message is visible (unless an enqueue is in flight, see
-- functions/settle_ready_at.sql; then ready_at is left early: as it was, or now where a
-- redelivery's claim had moved it past the lease, functions/stamp_lease.sql). The row takes
-- the version pin of the instance's current execution too (functions/current_pin.sql),
-- which a turn written in this transaction may have changed.
CREATE OR REPLACE FUNCTION __SCHEMA__.release_lease(p_instance text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_settle boolean := __SCHEMA__.fence_ready_at(p_instance);
BEGIN
    UPDATE __SCHEMA__.instance_leases AS l
    SET lock_token = NULL, locked_until = NULL, locked_at = NULL, attempt_count = 0,
        backoff_jitter = 0,
        (pinned_major, pinned_minor, pinned_patch) = (
            SELECT p.major, p.minor, p.patch FROM __SCHEMA__.current_pin(p_instance) AS p),
        pin_known = true,
        ready_at = CASE WHEN v_settle THEN __SCHEMA__.first_ready_at(p_instance)
                        WHEN l.ready_at > clock_timestamp() THEN clock_timestamp()
                        ELSE l.ready_at END
    WHERE l.instance_id = p_instance;
END;
$$;
