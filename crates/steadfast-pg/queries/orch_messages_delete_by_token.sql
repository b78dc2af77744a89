DELETE FROM __SCHEMA__.orchestrator_queue
WHERE lock_token = $1
