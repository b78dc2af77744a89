SELECT key, value, last_updated_at_ms
FROM __SCHEMA__.kv_store
WHERE instance_id = $1
