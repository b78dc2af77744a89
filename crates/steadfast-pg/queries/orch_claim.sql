-- One claim of the orchestrator queue (functions/claim_orchestration.sql). The parameters
-- as claim.rs binds them; NULL for $15-$17 means no limit. Nothing claimed and $18, also
-- the milliseconds until the next instance whose earliest ready message is delayed becomes
-- a candidate (instance_leases.ready_at and ready_hints; NULL if none), so an empty long
-- poll costs one statement. Waiting messages make no work when they become visible.
SELECT outcome, tries, claimed_instance, token, msg_ids, msg_items, msg_attempts,
       orch_name, orch_version, exec_id, has_instance, history_events,
       kv_keys, kv_values, kv_times, parked_instances,
       stopped,
       CASE WHEN outcome = 'empty' AND $18::boolean THEN (
           SELECT (EXTRACT(EPOCH FROM (min(n.at) - clock_timestamp())) * 1000)::float8
           FROM (
               SELECT min(l.ready_at) AS at
               FROM __SCHEMA__.instance_leases AS l
               WHERE l.ready_at > clock_timestamp()
               UNION ALL
               SELECT min(h.visible_at)
               FROM __SCHEMA__.ready_hints AS h
               WHERE h.visible_at > clock_timestamp()
           ) AS n
       ) END AS next_visible_ms
FROM __SCHEMA__.claim_orchestration(
    p_nonce => $1, p_lock_ms => $2, p_jitter => $3,
    p_scan => $4, p_fanout => $5, p_max_tries => $6, p_max_ms => $7,
    p_base_ms => $8, p_cap_ms => $9,
    p_filter => $10, p_min => $11, p_max => $12,
    p_max_attempts => $13, p_event_version => $14,
    p_max_batch => $15, p_max_history_events => $16, p_max_history_bytes => $17)
