SELECT COALESCE(max(event_id), 0) + 1
FROM __SCHEMA__.history
WHERE instance_id = $1 AND execution_id = $2
