-- steadfast-pg schema, version 9: the claim scans ready instances, not messages, so that
-- no number of messages queued for one instance costs a claim of another anything.
-- __SCHEMA__ is replaced by the validated, quoted schema name.

-- When the instance's earliest ready (not waiting) orchestrator message becomes visible, or
-- earlier; NULL while it has none. Lowered by every enqueue (enqueue_orchestrator) and by
-- the orphan sweep, set to the truth by settle_ready_at when no enqueue is in flight
-- (functions/settle_ready_at.sql has the rule that makes this safe).
ALTER TABLE __SCHEMA__.instance_leases ADD COLUMN ready_at timestamptz;

-- A ready message whose enqueue could not lower its instance's ready_at without waiting
-- for a lock (or found no lease row): the claim scans these as well, settle_ready_at
-- removes them once ready_at covers their messages. Normally empty or nearly so.
CREATE TABLE __SCHEMA__.ready_hints (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance_id text        NOT NULL,
    visible_at  timestamptz NOT NULL
);
CREATE INDEX ready_hints_instance_idx ON __SCHEMA__.ready_hints (instance_id);
CREATE INDEX ready_hints_visible_idx ON __SCHEMA__.ready_hints (visible_at);

-- Data as of this migration.
UPDATE __SCHEMA__.instance_leases AS l
SET ready_at = m.first_visible
FROM (
    SELECT q.instance_id, min(q.visible_at) AS first_visible
    FROM __SCHEMA__.orchestrator_queue AS q
    WHERE NOT q.waiting
    GROUP BY q.instance_id
) AS m
WHERE l.instance_id = m.instance_id;
INSERT INTO __SCHEMA__.ready_hints (instance_id, visible_at)
SELECT q.instance_id, min(q.visible_at)
FROM __SCHEMA__.orchestrator_queue AS q
WHERE NOT q.waiting
  AND NOT EXISTS (SELECT 1 FROM __SCHEMA__.instance_leases AS l
                  WHERE l.instance_id = q.instance_id)
GROUP BY q.instance_id;

CREATE INDEX instance_leases_ready_idx ON __SCHEMA__.instance_leases (ready_at)
    WHERE ready_at IS NOT NULL;
-- One instance's messages in visibility order: its batch, and its earliest ready message.
DROP INDEX __SCHEMA__.orchestrator_queue_ready_idx;
DROP INDEX __SCHEMA__.orchestrator_queue_instance_idx;
CREATE INDEX orchestrator_queue_instance_idx
    ON __SCHEMA__.orchestrator_queue (instance_id, visible_at, id);
