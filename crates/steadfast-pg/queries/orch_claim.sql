-- One claim of the orchestrator queue (functions/claim_orchestration.sql). The parameters
-- as claim.rs binds them; NULL for $15-$17 means no limit; $18: when nothing is claimed,
-- also read the milliseconds until the next delayed work becomes a candidate.
SELECT outcome, tries, claimed_instance, token, msg_ids, msg_items, msg_attempts,
       orch_name, orch_version, exec_id, has_instance, history_events,
       kv_keys, kv_values, kv_times, parked_instances,
       stopped, next_visible_ms, more_ready
FROM __SCHEMA__.claim_orchestration(
    p_nonce => $1, p_lock_ms => $2, p_jitter => $3,
    p_scan => $4, p_fanout => $5, p_max_tries => $6, p_max_ms => $7,
    p_base_ms => $8, p_cap_ms => $9,
    p_filter => $10, p_min => $11, p_max => $12,
    p_max_attempts => $13, p_event_version => $14,
    p_max_batch => $15, p_max_history_events => $16, p_max_history_bytes => $17,
    p_next_visible => $18)
