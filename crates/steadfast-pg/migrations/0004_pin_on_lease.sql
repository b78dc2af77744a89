-- The current execution's pinned version on its instance's lease row (NULL: not pinned),
-- kept by write_turn, so that the claim's version filter reads the candidate scan's own
-- rows instead of joining instances and executions for every candidate.
ALTER TABLE __SCHEMA__.instance_leases
    ADD COLUMN pinned_major integer,
    ADD COLUMN pinned_minor integer,
    ADD COLUMN pinned_patch integer;

UPDATE __SCHEMA__.instance_leases AS l
SET pinned_major = e.pinned_major,
    pinned_minor = e.pinned_minor,
    pinned_patch = e.pinned_patch
FROM __SCHEMA__.instances AS i
JOIN __SCHEMA__.executions AS e
  ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
WHERE i.instance_id = l.instance_id
  AND e.pinned_major IS NOT NULL;
