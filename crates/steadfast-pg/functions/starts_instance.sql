-- Whether a serialized orchestrator work item starts an execution of its instance
-- (StartOrchestration, ContinueAsNew). serde writes an enum variant as its first key.
CREATE OR REPLACE FUNCTION __SCHEMA__.starts_instance(p_item text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT p_item LIKE '{"StartOrchestration":%' OR p_item LIKE '{"ContinueAsNew":%'
$$;
