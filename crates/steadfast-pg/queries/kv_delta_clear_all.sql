-- Tombstone every key visible to the instance (stored or set in this execution).
INSERT INTO __SCHEMA__.kv_delta (instance_id, key, value, last_updated_at_ms)
SELECT $1, k.key, NULL, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::int8
FROM (
    SELECT key FROM __SCHEMA__.kv_store WHERE instance_id = $1
    UNION
    SELECT key FROM __SCHEMA__.kv_delta WHERE instance_id = $1
) AS k
ON CONFLICT (instance_id, key) DO UPDATE
SET value = NULL, last_updated_at_ms = EXCLUDED.last_updated_at_ms
