-- Lock an instance's lease row (poison without a live lease, deletion).
SELECT lock_token, COALESCE(locked_until > clock_timestamp(), false) AS live
FROM __SCHEMA__.instance_leases
WHERE instance_id = $1
FOR UPDATE
