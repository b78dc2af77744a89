-- Direct children of instance $1.
SELECT instance_id
FROM __SCHEMA__.instances
WHERE parent_instance_id = $1
ORDER BY created_at, instance_id
