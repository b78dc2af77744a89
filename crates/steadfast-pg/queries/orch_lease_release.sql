UPDATE __SCHEMA__.instance_leases
SET lock_token = NULL, locked_until = NULL, locked_at = NULL, attempt_count = 0, backoff_jitter = 0
WHERE instance_id = $1
