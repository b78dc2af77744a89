-- Instances whose lease's current version was written by one of these transactions: each
-- is a claim that committed, with its lease stamped for the process that sent it.
SELECT instance_id FROM __SCHEMA__.instance_leases WHERE xmin::text = ANY($1) ORDER BY 1
