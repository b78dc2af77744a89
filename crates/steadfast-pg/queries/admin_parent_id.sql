-- No row: the instance does not exist. NULL parent: a root orchestration.
SELECT parent_instance_id
FROM __SCHEMA__.instances
WHERE instance_id = $1
