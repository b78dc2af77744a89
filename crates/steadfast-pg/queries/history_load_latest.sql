-- History of the instance's latest execution (execution 1 when it has none), read in
-- one statement so a concurrent continue-as-new cannot split the answer: (execution id,
-- event), oldest event first.
SELECT execution_id, event_data
FROM __SCHEMA__.history
WHERE instance_id = $1
  AND execution_id = (SELECT COALESCE(max(execution_id), 1)
                      FROM __SCHEMA__.executions
                      WHERE instance_id = $1)
ORDER BY event_id
