SELECT (SELECT count(*) FROM __SCHEMA__.orchestrator_queue)::int8,
       (SELECT count(*) FROM __SCHEMA__.worker_queue)::int8
