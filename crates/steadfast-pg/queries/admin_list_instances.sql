-- Every instance, newest first.
SELECT instance_id
FROM __SCHEMA__.instances
ORDER BY created_at DESC, instance_id
