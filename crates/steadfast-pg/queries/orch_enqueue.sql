-- See enqueue_orchestrator (migration 0003). Per message: $1 instance, $2 work item,
-- $3 delay ms (NULL = now), $4 absolute visibility in epoch ms.
SELECT __SCHEMA__.enqueue_orchestrator($1, $2, $3, $4)
