-- Ack a turn (functions/ack_turn_handing_off.sql): $1 the lock token, then the turn as
-- TurnParams in turn.rs binds it, then the hand-off of its worker items (token prefixes,
-- lock ms, jitters; NULL: none handed out). Returns state ('ok', 'expired' or 'unknown')
-- and the handed-out items' lock tokens.
SELECT a.state, a.handed
FROM __SCHEMA__.ack_turn_handing_off(
    p_token => $1, p_execution => $2,
    p_name => $3, p_version => $4, p_parent => $5, p_pin => $6,
    p_status => $7, p_output => $8,
    p_event_ids => $9, p_event_types => $10, p_event_texts => $11,
    p_custom_status_changed => $12, p_custom_status => $13,
    p_kv_keys => $14, p_kv_values => $15, p_kv_times => $16,
    p_w_items => $17, p_w_instances => $18, p_w_executions => $19, p_w_activities => $20,
    p_w_sessions => $21, p_w_tags => $22,
    p_c_instances => $23, p_c_executions => $24, p_c_activities => $25,
    p_o_instances => $26, p_o_items => $27, p_o_delays => $28, p_o_visible => $29,
    p_w_token_prefixes => $30, p_w_lock_ms => $31, p_w_jitters => $32) AS a
