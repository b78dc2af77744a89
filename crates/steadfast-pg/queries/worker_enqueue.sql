-- Per item: $1 work item, $2 instance, $3 execution, $4 activity id, $5 session, $6 tag.
INSERT INTO __SCHEMA__.worker_queue (work_item, instance_id, execution_id, activity_id, session_id, tag)
SELECT *
FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::text[], $6::text[])
