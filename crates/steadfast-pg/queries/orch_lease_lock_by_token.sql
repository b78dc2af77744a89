-- Lock the lease a token belongs to (ack, abandon). live = not yet expired.
SELECT instance_id, (locked_until > clock_timestamp()) AS live, attempt_count
FROM __SCHEMA__.instance_leases
WHERE instance_id = __SCHEMA__.token_instance($1) AND lock_token = $1
FOR NO KEY UPDATE
