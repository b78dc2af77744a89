-- Whether an orchestrator message (its instance, visible_at and lock_token) is one the
-- claim that issued p_token tagged: the token's instance, no later than the latest
-- visible_at that claim tagged (instance_leases.tagged_until, migration 0007; NULL, for a
-- lease stamped before it, bounds nothing), and the token's tag. Every tagged message is
-- inside the range by construction (stored values, no clock), so the ack, the abandon, the
-- give-back and the claim's put-back find exactly the tagged messages through the queue's
-- (instance_id, visible_at, id) index, without reading a backlog that arrived after the
-- claim. An SQL function PostgreSQL inlines, so that its conditions stay index conditions.
CREATE OR REPLACE FUNCTION __SCHEMA__.tagged_by_claim(
    p_msg_instance text, p_msg_visible_at timestamptz, p_msg_token text,
    p_instance text, p_token text, p_tagged_until timestamptz
) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT p_msg_instance = p_instance
       AND p_msg_visible_at <= COALESCE(p_tagged_until, 'infinity')
       AND p_msg_token = p_token
$$;
