-- The current generation of an instance (migration 0007), for the diagnostic of a refused
-- token. No lock: read once, best effort.
SELECT generation
FROM __SCHEMA__.instance_leases
WHERE instance_id = $1
