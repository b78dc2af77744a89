-- Run once after migrations on the connection that applied them: the first statement
-- after DDL pays for cache rebuilds (~100 ms measured), which must not land in a claim.
SELECT (SELECT count(*) FROM (SELECT 1 FROM __SCHEMA__.orchestrator_queue LIMIT 1) AS o)
     + (SELECT count(*) FROM (SELECT 1 FROM __SCHEMA__.instance_leases LIMIT 1) AS l)
     + (SELECT count(*) FROM (SELECT 1 FROM __SCHEMA__.worker_queue LIMIT 1) AS w)
     + (SELECT count(*) FROM (SELECT 1 FROM __SCHEMA__.history LIMIT 1) AS h)
