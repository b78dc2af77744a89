-- Orchestration claims of this schema's workers blocked on a lock, with the transaction
-- id each has already written under (the attempts it counted).
SELECT pid, application_name, backend_xid::text
FROM pg_stat_activity
WHERE application_name LIKE $1 || '%'
  AND wait_event_type = 'Lock'
  AND query LIKE '%' || $2 || '%claim_orchestration%'
  AND backend_xid IS NOT NULL
