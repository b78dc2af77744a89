-- doctor: the instances behind advisory-lock keys ($1, bigint[]) taken as
-- pg_advisory_xact_lock(hashtext(instance_id)). Rows: key (text), instance_id.
SELECT k.key::text AS key, i.instance_id
FROM unnest($1::int8[]) AS k(key)
JOIN LATERAL (
    SELECT ids.instance_id
    FROM (SELECT instance_id FROM __SCHEMA__.orchestrator_queue
          UNION SELECT instance_id FROM __SCHEMA__.instance_leases) AS ids
    WHERE hashtext(ids.instance_id)::int8 = k.key LIMIT 1) AS i ON true
