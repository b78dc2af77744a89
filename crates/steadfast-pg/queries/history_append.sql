-- Append-only: a duplicate (instance, execution, event_id) is a unique violation.
INSERT INTO __SCHEMA__.history (instance_id, execution_id, event_id, event_type, event_data)
SELECT $1, $2, t.event_id, t.event_type, t.event_data
FROM unnest($3::int8[], $4::text[], $5::text[]) AS t(event_id, event_type, event_data)
