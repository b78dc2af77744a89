SELECT custom_status, custom_status_version
FROM __SCHEMA__.instances
WHERE instance_id = $1 AND custom_status_version > $2
