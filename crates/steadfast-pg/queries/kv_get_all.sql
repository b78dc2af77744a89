SELECT merged.key, merged.value
FROM (
    SELECT COALESCE(d.key, s.key) AS key,
           CASE WHEN d.key IS NOT NULL THEN d.value ELSE s.value END AS value
    FROM (SELECT key, value FROM __SCHEMA__.kv_store WHERE instance_id = $1) AS s
    FULL JOIN (SELECT key, value FROM __SCHEMA__.kv_delta WHERE instance_id = $1) AS d
           ON d.key = s.key
) AS merged
WHERE merged.value IS NOT NULL
