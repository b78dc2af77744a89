-- A start enqueued only if its instance does not exist (functions/start_instance_exclusive.sql).
-- $1 instance, $2 the StartOrchestration work item. True when enqueued.
SELECT __SCHEMA__.start_instance_exclusive($1, $2)
