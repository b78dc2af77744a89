-- How many of these server processes are still running.
SELECT count(*)::int8 FROM pg_stat_activity WHERE pid = ANY($1)
