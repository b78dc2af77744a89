-- An execution ended: fold its KV delta into the store, apply tombstones, clear it.
WITH upserted AS (
    INSERT INTO __SCHEMA__.kv_store (instance_id, key, value, last_updated_at_ms)
    SELECT instance_id, key, value, last_updated_at_ms
    FROM __SCHEMA__.kv_delta
    WHERE instance_id = $1 AND value IS NOT NULL
    ON CONFLICT (instance_id, key) DO UPDATE
    SET value = EXCLUDED.value, last_updated_at_ms = EXCLUDED.last_updated_at_ms
), removed AS (
    DELETE FROM __SCHEMA__.kv_store AS s
    USING __SCHEMA__.kv_delta AS d
    WHERE s.instance_id = $1 AND d.instance_id = $1 AND d.key = s.key AND d.value IS NULL
)
DELETE FROM __SCHEMA__.kv_delta
WHERE instance_id = $1
