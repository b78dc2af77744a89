-- steadfast-pg schema, version 6: instances that are not running cannot cost a claim.
-- __SCHEMA__ is replaced by the validated, quoted schema name before this file runs.
-- From this version on, server-side functions live in functions/ (one per file) and are
-- applied after the migrations whenever their text changes; migrations change schema only.

-- When the instance's queued messages may first be claimed: '-infinity' once it has been
-- started (it has an instance row or history), the visibility time of its earliest queued
-- start while it has not, NULL while nothing has started it. Messages of an instance with
-- NULL here wait for a start and are never candidates of a claim (functions/
-- claim_orchestration.sql); past claim.orphan_timeout they are dead-lettered as
-- 'orphaned' (queries/orch_orphans_dead_letter.sql).
ALTER TABLE __SCHEMA__.instance_leases ADD COLUMN runnable_from timestamptz;

-- Data as of this migration (the start-item rule is functions/starts_instance.sql).
UPDATE __SCHEMA__.instance_leases AS l
SET runnable_from = '-infinity'
WHERE EXISTS (SELECT 1 FROM __SCHEMA__.instances AS i WHERE i.instance_id = l.instance_id)
   OR EXISTS (SELECT 1 FROM __SCHEMA__.history AS h WHERE h.instance_id = l.instance_id);
UPDATE __SCHEMA__.instance_leases AS l
SET runnable_from = s.first_start
FROM (
    SELECT q.instance_id, min(q.visible_at) AS first_start
    FROM __SCHEMA__.orchestrator_queue AS q
    WHERE q.work_item LIKE '{"StartOrchestration":%' OR q.work_item LIKE '{"ContinueAsNew":%'
    GROUP BY q.instance_id
) AS s
WHERE l.instance_id = s.instance_id AND l.runnable_from IS NULL;

-- The instances whose messages wait for a start: what the orphan sweep walks.
CREATE INDEX instance_leases_awaiting_start_idx ON __SCHEMA__.instance_leases (instance_id)
    WHERE runnable_from IS NULL;

-- Which version of each server-side function file is installed (see migrate.rs).
CREATE TABLE __SCHEMA__.schema_functions (
    name        text        PRIMARY KEY,
    checksum    text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
