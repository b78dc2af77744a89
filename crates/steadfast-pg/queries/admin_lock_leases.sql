-- First statement of every deletion: lock the instances' lease rows in key order (no
-- deadlock between concurrent deletions). Holding them excludes claims (which skip
-- locked rows), acks and abandons of these instances until commit.
SELECT instance_id
FROM __SCHEMA__.instance_leases
WHERE instance_id = ANY($1::text[])
ORDER BY instance_id
FOR UPDATE
