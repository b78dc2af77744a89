SELECT instance_id, count(*)::int8 FROM __SCHEMA__.executions GROUP BY instance_id
