-- The attempt count of the lease a token belongs to, for a rejected ack's diagnostic (an
-- expired lease still carries the count of its claim). No lock: read once, best effort.
SELECT attempt_count
FROM __SCHEMA__.instance_leases
WHERE instance_id = __SCHEMA__.token_instance($1) AND lock_token = $1
