SELECT event_data
FROM __SCHEMA__.history
WHERE instance_id = $1 AND execution_id = $2
ORDER BY event_id
