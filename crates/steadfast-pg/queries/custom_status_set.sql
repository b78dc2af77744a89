UPDATE __SCHEMA__.instances
SET custom_status = $2, custom_status_version = custom_status_version + 1
WHERE instance_id = $1
