-- No commit notifies any more: the provider sends coalesced wake-ups for enqueues and
-- ended executions after its writes commit (src/wake.rs).
DROP TRIGGER IF EXISTS orchestrator_queue_notify ON __SCHEMA__.orchestrator_queue;
DROP TRIGGER IF EXISTS worker_queue_notify ON __SCHEMA__.worker_queue;
DROP TRIGGER IF EXISTS executions_end_notify ON __SCHEMA__.executions;
DROP FUNCTION IF EXISTS __SCHEMA__.notify_enqueued();
DROP FUNCTION IF EXISTS __SCHEMA__.notify_execution_ended();
