-- Lock an instance's lease row (poison without a live lease, deletion). live = not yet
-- expired; generation = the incarnation (migration 0007); attempt_count = the attempt of
-- the claim that stamped the lease (0 once released).
SELECT lock_token, COALESCE(locked_until > clock_timestamp(), false) AS live, generation,
       attempt_count
FROM __SCHEMA__.instance_leases
WHERE instance_id = $1
FOR NO KEY UPDATE
