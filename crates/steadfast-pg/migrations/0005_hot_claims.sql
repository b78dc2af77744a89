-- Claims update in place. A lease stamp and a work-item claim write lock_token; with an
-- index on it every such update added an entry to each index of the table (and left as
-- many dead ones behind). Tokens now name their row instead (functions/token_instance.sql,
-- functions/token_work_item.sql), and free space on each page lets the new row version
-- stay on its page (a HOT update), where the next page access prunes the old one without
-- a vacuum. Existing pages keep their fill until rewritten.
DROP INDEX __SCHEMA__.instance_leases_token_idx;
DROP INDEX __SCHEMA__.worker_queue_token_idx;
ALTER TABLE __SCHEMA__.instance_leases SET (fillfactor = 50);
ALTER TABLE __SCHEMA__.worker_queue SET (fillfactor = 70);
