-- Instance leases whose current version was written by one of these transactions: each
-- is a claim that committed, with its lease stamped for the process that sent it.
SELECT count(*)::int8 FROM __SCHEMA__.instance_leases WHERE xmin::text = ANY($1)
