-- One claim of the orchestrator queue: see functions/claim_orchestration.sql.
-- $1 token nonce, $2 lock ms, $3 backoff jitter, $4 scan limit, $5 fanout, $6 max tries,
-- $7 max ms, $8 backoff base ms, $9 backoff cap ms, $10 version filter on,
-- $11 min (major, minor, patch), $12 max (major, minor, patch), $13 max attempts (NULL =
-- no ceiling), $14 duroxide version stamped on the events of a ceiling failure, $15 max
-- messages per batch, $16 max history events, $17 max history stored bytes (NULL = none).
SELECT outcome, tries, claimed_instance, token, msg_ids, msg_items, msg_attempts,
       orch_name, orch_version, exec_id, has_instance, history_events,
       kv_keys, kv_values, kv_times, parked_instances,
       stopped
FROM __SCHEMA__.claim_orchestration($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                                    $13, $14, $15, $16, $17)
