-- An ordinary orchestration turn ack that may hand some of the activities it schedules
-- straight to waiting worker fetches of the acking process (src/handoff.rs): lock the
-- token's lease, and only if it is live delete the claimed messages, write the turn and
-- release the lease. `state`: 'ok', 'expired' (lease ran out) or 'unknown' (no lease has
-- this token: superseded, released or never issued); nothing is written unless 'ok'.
-- `handed`: with 'ok', the lock tokens of the worker items in item order, NULL for those
-- not handed out (functions/enqueue_work_items.sql, whose last three parameters are this
-- one's last three). The parameters between are write_turn's after its instance. The
-- lease row is taken FOR NO KEY UPDATE, which excludes every other lease holder; an
-- enqueue into the instance holds the row only while it lowers ready_at
-- (functions/enqueue_orchestrator.sql), so an ack waits at most for such a write to
-- commit.
CREATE OR REPLACE FUNCTION __SCHEMA__.ack_turn_handing_off(
    p_token text, p_execution bigint,
    p_name text, p_version text, p_parent text, p_pin integer[],
    p_status text, p_output text,
    p_event_ids bigint[], p_event_types text[], p_event_texts text[],
    p_custom_status_changed boolean, p_custom_status text,
    p_kv_keys text[], p_kv_values text[], p_kv_times bigint[],
    p_w_items text[], p_w_instances text[], p_w_executions bigint[], p_w_activities bigint[],
    p_w_sessions text[], p_w_tags text[],
    p_c_instances text[], p_c_executions bigint[], p_c_activities bigint[],
    p_o_instances text[], p_o_items text[], p_o_delays float8[], p_o_visible float8[],
    p_w_token_prefixes text[], p_w_lock_ms float8[], p_w_jitters real[],
    OUT state text, OUT handed text[]
) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_instance text;
    v_live boolean;
    v_tagged_until timestamptz;
BEGIN
    SELECT l.instance_id, l.locked_until > clock_timestamp(), l.tagged_until
    INTO v_instance, v_live, v_tagged_until
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.instance_id = __SCHEMA__.token_instance(p_token) AND l.lock_token = p_token
    FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        state := 'unknown';
        RETURN;
    END IF;
    IF NOT COALESCE(v_live, false) THEN
        state := 'expired';
        RETURN;
    END IF;
    DELETE FROM __SCHEMA__.orchestrator_queue AS q
    WHERE __SCHEMA__.tagged_by_claim(q.instance_id, q.visible_at, q.lock_token,
                                     v_instance, p_token, v_tagged_until);
    -- Before write_turn, whose cancellations then delete an activity this turn both
    -- schedules and cancels (never handed out: src/handoff.rs).
    IF cardinality(p_w_items) > 0 THEN
        handed := __SCHEMA__.enqueue_work_items(p_w_items, p_w_instances, p_w_executions,
                                                p_w_activities, p_w_sessions, p_w_tags,
                                                p_w_token_prefixes, p_w_lock_ms, p_w_jitters);
    END IF;
    PERFORM __SCHEMA__.write_turn(
        v_instance, p_execution, p_name, p_version, p_parent, p_pin, p_status, p_output,
        p_event_ids, p_event_types, p_event_texts, p_custom_status_changed, p_custom_status,
        p_kv_keys, p_kv_values, p_kv_times,
        '{}', '{}', '{}', '{}', '{}', '{}',
        p_c_instances, p_c_executions, p_c_activities,
        p_o_instances, p_o_items, p_o_delays, p_o_visible);
    PERFORM __SCHEMA__.release_lease(v_instance);
    state := 'ok';
END;
$$;
