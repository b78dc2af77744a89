-- The claim's version filter for a lease row: from the pin the row carries
-- (migrations/0006_lease_pins.sql), or, for a row that does not know it yet, from the
-- execution (two index lookups, which the claim's scan otherwise avoids). One CASE, no
-- subquery, so that the planner inlines it into the scan.
CREATE OR REPLACE FUNCTION __SCHEMA__.lease_pin_in_range(
    p_instance text, p_known boolean, p_major integer, p_minor integer, p_patch integer,
    p_min integer[], p_max integer[]
) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_known
                THEN __SCHEMA__.version_in_range(p_major, p_minor, p_patch, p_min, p_max)
                ELSE __SCHEMA__.execution_pin_in_range(p_instance, p_min, p_max) END
$$;
