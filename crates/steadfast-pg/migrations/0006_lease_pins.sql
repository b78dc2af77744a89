-- The version pin of an instance's current execution, kept on its lease row, so that the
-- claim's candidate scan reads one table: before, each candidate cost two index lookups
-- (instances, then executions) to test a dispatcher's version range.
-- functions/release_lease.sql copies the pin at every release, in the transaction that
-- wrote it (pins change only in a turn's write, which always releases its lease).
-- pin_known is false where the row has not been released since: rows from before this
-- migration, and rows made for an instance that may have executions already; the claim
-- reads their pin from the execution instead.
ALTER TABLE __SCHEMA__.instance_leases
    ADD COLUMN pinned_major integer,
    ADD COLUMN pinned_minor integer,
    ADD COLUMN pinned_patch integer,
    ADD COLUMN pin_known boolean NOT NULL DEFAULT false;
