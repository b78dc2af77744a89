-- Drop every connection steadfast-pg opened (its application_name), except our own.
-- Only ever run against a throwaway cluster owned by the test.
SELECT count(pg_terminate_backend(pid))::int8
FROM pg_stat_activity
WHERE application_name = 'steadfast' AND pid <> pg_backend_pid()
