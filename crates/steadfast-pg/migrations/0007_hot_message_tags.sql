-- A claim's tag of its messages updates in place. The tag writes lock_token; with an index
-- on it every tag added an entry to each index of the queue (and left as many dead ones
-- behind). Tokens name their instance (functions/token_instance.sql), so whatever looks
-- messages up by token reaches them through the instance's index instead, and free space
-- on each page lets the tagged version stay on its page (a HOT update). Existing pages
-- keep their fill until rewritten.
--
-- tagged_until: the latest visible_at among the messages the lease's claim tagged, so that
-- the ack reads no more of the instance's queue than the tagged messages' range (an
-- instance with a backlog past the claim's batch cap would otherwise be read whole by
-- every ack). NULL on leases stamped before this migration: their acks read the whole
-- instance.
DROP INDEX __SCHEMA__.orchestrator_queue_token_idx;
ALTER TABLE __SCHEMA__.orchestrator_queue SET (fillfactor = 70);
ALTER TABLE __SCHEMA__.instance_leases ADD COLUMN tagged_until timestamptz;
