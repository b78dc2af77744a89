UPDATE __SCHEMA__.executions
SET pinned_major = $3, pinned_minor = $4, pinned_patch = $5
WHERE instance_id = $1 AND execution_id = $2
