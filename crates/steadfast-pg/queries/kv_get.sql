-- The current-execution delta wins over the store; a delta tombstone hides the key.
SELECT d.key IS NOT NULL AS in_delta, d.value AS delta_value, s.value AS store_value
FROM (SELECT 1) AS one
LEFT JOIN __SCHEMA__.kv_delta AS d ON d.instance_id = $1 AND d.key = $2
LEFT JOIN __SCHEMA__.kv_store AS s ON s.instance_id = $1 AND s.key = $2
