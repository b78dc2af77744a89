-- Delete cancelled activities; a worker holding one learns of it at its next renewal.
DELETE FROM __SCHEMA__.worker_queue
WHERE (instance_id, execution_id, activity_id) IN (
    SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[])
)
