-- One claim of the worker queue (functions/claim_work_item.sql). $1 token prefix, $2 lock
-- ms, $3 jitter, $4 backoff base ms, $5 backoff cap ms, $6 tag mode, $7 tags, $8 session
-- owner, $9 whether to read the next visible time when nothing is claimed, $10 whether a
-- claimed row reads more_ready and the next visible time.
SELECT id, work_item, attempt_count, session_id, lock_token, next_visible_ms, more_ready
FROM __SCHEMA__.claim_work_item(
    p_token_prefix => $1, p_lock_ms => $2, p_jitter => $3,
    p_base_ms => $4, p_cap_ms => $5,
    p_tag_mode => $6, p_tags => $7, p_session_owner => $8,
    p_next_visible => $9, p_tell_more => $10)
