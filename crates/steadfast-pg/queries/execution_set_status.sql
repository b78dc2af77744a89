UPDATE __SCHEMA__.executions
SET status = $3,
    output = $4,
    completed_at = CASE WHEN $3 IN ('Completed', 'Failed', 'ContinuedAsNew')
                        THEN clock_timestamp() ELSE completed_at END
WHERE instance_id = $1 AND execution_id = $2
