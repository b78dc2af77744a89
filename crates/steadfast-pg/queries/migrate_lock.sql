-- Serialize concurrent starters on one schema for the length of the migration transaction.
SELECT pg_advisory_xact_lock(hashtextextended('steadfast-migrate:' || $1, 0))
