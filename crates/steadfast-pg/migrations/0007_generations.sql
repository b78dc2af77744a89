-- steadfast-pg schema, version 7: every incarnation of an instance id has a generation
-- that is never reused. __SCHEMA__ is replaced by the validated, quoted schema name.
--
-- An incarnation lives as long as its lease row: the row is created by the first enqueue
-- to the id and removed when the instance is deleted (or its orphaned messages are
-- dead-lettered), so a re-created instance gets a new row and a new generation. Lock
-- tokens carry the generation of the row they were issued on (claim_orchestration), so a
-- disposition from an older incarnation is recognised and refused. An identity column's
-- sequence never hands a value out twice; existing rows each get their own.
ALTER TABLE __SCHEMA__.instance_leases
    ADD COLUMN generation bigint NOT NULL GENERATED ALWAYS AS IDENTITY;
