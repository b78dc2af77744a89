-- An ordinary orchestration turn ack that hands nothing out
-- (functions/ack_turn_handing_off.sql). Returns its state: 'ok', 'expired' or 'unknown'.
-- Kept for builds before the hand-off, during a rolling upgrade.
CREATE OR REPLACE FUNCTION __SCHEMA__.ack_turn(
    p_token text, p_execution bigint,
    p_name text, p_version text, p_parent text, p_pin integer[],
    p_status text, p_output text,
    p_event_ids bigint[], p_event_types text[], p_event_texts text[],
    p_custom_status_changed boolean, p_custom_status text,
    p_kv_keys text[], p_kv_values text[], p_kv_times bigint[],
    p_w_items text[], p_w_instances text[], p_w_executions bigint[], p_w_activities bigint[],
    p_w_sessions text[], p_w_tags text[],
    p_c_instances text[], p_c_executions bigint[], p_c_activities bigint[],
    p_o_instances text[], p_o_items text[], p_o_delays float8[], p_o_visible float8[]
) RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    RETURN (SELECT a.state
            FROM __SCHEMA__.ack_turn_handing_off(
                p_token, p_execution, p_name, p_version, p_parent, p_pin, p_status,
                p_output, p_event_ids, p_event_types, p_event_texts,
                p_custom_status_changed, p_custom_status, p_kv_keys, p_kv_values,
                p_kv_times, p_w_items, p_w_instances, p_w_executions, p_w_activities,
                p_w_sessions, p_w_tags, p_c_instances, p_c_executions, p_c_activities,
                p_o_instances, p_o_items, p_o_delays, p_o_visible, NULL, NULL, NULL) AS a);
END;
$$;
