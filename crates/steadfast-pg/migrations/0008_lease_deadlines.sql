-- steadfast-pg schema, version 8: when a work item's lease began, so that its renewals can
-- stop at claim.max_activity_duration (the orchestrator lease has locked_at already).
-- __SCHEMA__ is replaced by the validated, quoted schema name. Rows leased before this
-- version have none, and no deadline, until they are claimed again.
ALTER TABLE __SCHEMA__.worker_queue ADD COLUMN locked_at timestamptz;
