-- History and KV footprint of the instance's current execution, plus its first event
-- (the caller counts carried-forward events from it). No row for an unknown instance.
SELECT i.current_execution_id,
       h.event_count,
       h.size_bytes,
       kv.key_count,
       kv.value_bytes,
       (SELECT event_data FROM __SCHEMA__.history AS f
         WHERE f.instance_id = i.instance_id AND f.execution_id = i.current_execution_id
           AND f.event_id = 1) AS first_event
FROM __SCHEMA__.instances AS i
CROSS JOIN LATERAL (
    SELECT count(*)::int8 AS event_count, COALESCE(sum(octet_length(event_data)), 0)::int8 AS size_bytes
    FROM __SCHEMA__.history
    WHERE instance_id = i.instance_id AND execution_id = i.current_execution_id
) AS h
CROSS JOIN LATERAL (
    SELECT count(*)::int8 AS key_count, COALESCE(sum(octet_length(m.value)), 0)::int8 AS value_bytes
    FROM (
        SELECT CASE WHEN d.key IS NOT NULL THEN d.value ELSE s.value END AS value
        FROM (SELECT key, value FROM __SCHEMA__.kv_store WHERE instance_id = i.instance_id) AS s
        FULL JOIN (SELECT key, value FROM __SCHEMA__.kv_delta WHERE instance_id = i.instance_id) AS d
               ON d.key = s.key
    ) AS m
    WHERE m.value IS NOT NULL
) AS kv
WHERE i.instance_id = $1
