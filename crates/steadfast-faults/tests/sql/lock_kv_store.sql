-- Block every statement that reads the instance key-value store until this transaction
-- ends: an orchestration claim reads it inside its one statement, after it has counted
-- the attempt and before it commits.
LOCK TABLE __SCHEMA__.kv_store IN ACCESS EXCLUSIVE MODE
