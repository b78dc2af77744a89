SELECT instance_id, queue, attempt_count::int8, reason FROM __SCHEMA__.dead_letters ORDER BY id
