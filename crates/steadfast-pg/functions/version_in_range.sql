-- The claim's version filter for one pin (major, minor, patch): unpinned (NULL major), or
-- inside [p_min, p_max] (duroxide's DispatcherCapabilityFilter, as claim.rs binds it).
CREATE OR REPLACE FUNCTION __SCHEMA__.version_in_range(
    p_major integer, p_minor integer, p_patch integer, p_min integer[], p_max integer[]
) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
    SELECT p_major IS NULL
        OR (p_major, p_minor, p_patch)
           BETWEEN (p_min[1], p_min[2], p_min[3]) AND (p_max[1], p_max[2], p_max[3])
$$;
