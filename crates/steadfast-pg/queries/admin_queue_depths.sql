-- Messages nobody currently holds, by the database clock. An orchestrator message is
-- held while its instance has a live lease (a message without a lease row counts as
-- free); a work item is held while its own lease lives. Delayed messages are counted.
SELECT (SELECT count(*)
        FROM __SCHEMA__.orchestrator_queue AS q
        LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = q.instance_id
        WHERE l.lock_token IS NULL OR l.locked_until <= clock_timestamp()) AS orchestrator,
       (SELECT count(*)
        FROM __SCHEMA__.worker_queue AS w
        WHERE w.lock_token IS NULL OR w.locked_until <= clock_timestamp()) AS worker
