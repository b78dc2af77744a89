-- Drop every connection steadfast-pg opened (the test's provider: its default
-- application_name; workers: named by the fleet), except our own.
-- Only ever run against a throwaway cluster owned by the test.
SELECT count(pg_terminate_backend(pid))::int8
FROM pg_stat_activity
WHERE (application_name = 'steadfast' OR application_name LIKE 'steadfast-fault-worker-%')
  AND pid <> pg_backend_pid()
