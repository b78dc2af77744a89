-- Recreate a missing lease row (only after an enqueue raced an instance deletion).
INSERT INTO __SCHEMA__.instance_leases (instance_id)
VALUES ($1)
ON CONFLICT (instance_id) DO NOTHING
