-- steadfast-pg schema, version 6: messages to instances that are not running cannot cost a
-- claim. __SCHEMA__ is replaced by the validated, quoted schema name before this file runs.
-- From this version on, server-side functions live in functions/ (one per file) and are
-- installed after the migrations whenever their text changes; migrations change schema only.

-- When the instance's queued messages may first be claimed: '-infinity' once it has been
-- started (it has an instance row or history), the visibility time of its earliest queued
-- start while it has not, NULL while nothing has started it.
ALTER TABLE __SCHEMA__.instance_leases ADD COLUMN runnable_from timestamptz;

-- A message that became visible before its instance was runnable (enqueued to an instance
-- nothing has started, or ahead of a delayed start). Waiting messages are not in the ready
-- index, so no number of them costs a claim anything; the claim of their instance's start
-- takes them along. Those whose instance nothing starts within claim.orphan_timeout are
-- dead-lettered as 'orphaned' (functions/sweep_orphans.sql).
ALTER TABLE __SCHEMA__.orchestrator_queue ADD COLUMN waiting boolean NOT NULL DEFAULT false;

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
UPDATE __SCHEMA__.orchestrator_queue AS q
SET waiting = true
FROM __SCHEMA__.instance_leases AS l
WHERE l.instance_id = q.instance_id
  AND q.lock_token IS NULL
  AND NOT COALESCE(l.runnable_from <= q.visible_at, false);

-- The claim's scan walks ready messages only; the orphan sweep walks waiting ones.
DROP INDEX __SCHEMA__.orchestrator_queue_ready_idx;
CREATE INDEX orchestrator_queue_ready_idx ON __SCHEMA__.orchestrator_queue (visible_at, id)
    WHERE NOT waiting;
CREATE INDEX orchestrator_queue_waiting_idx ON __SCHEMA__.orchestrator_queue (visible_at, id)
    WHERE waiting;

-- Which version of each server-side function file is installed (see migrate.rs).
CREATE TABLE __SCHEMA__.schema_functions (
    name        text        PRIMARY KEY,
    checksum    text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
