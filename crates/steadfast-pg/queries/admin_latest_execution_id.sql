-- Highest execution of the instance; 1 when it has none (the trait's convention).
SELECT COALESCE(max(execution_id), 1)::int8
FROM __SCHEMA__.executions
WHERE instance_id = $1
