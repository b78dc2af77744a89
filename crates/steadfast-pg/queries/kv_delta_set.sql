-- $3 NULL records a tombstone; $4 NULL stamps the database clock.
INSERT INTO __SCHEMA__.kv_delta (instance_id, key, value, last_updated_at_ms)
VALUES ($1, $2, $3, COALESCE($4, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::int8))
ON CONFLICT (instance_id, key) DO UPDATE
SET value = EXCLUDED.value, last_updated_at_ms = EXCLUDED.last_updated_at_ms
