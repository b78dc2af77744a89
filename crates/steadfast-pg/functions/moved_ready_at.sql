-- A lease row's ready_at once its lease's end moves from p_old_until to p_new_until (a
-- restamp or a renewal). A redelivery's claim moved ready_at past its lease
-- (functions/stamp_lease.sql), so it moves on with the lease's end; a first attempt's
-- stays where its messages put it (so that its stamp and renewals stay HOT updates).
CREATE OR REPLACE FUNCTION __SCHEMA__.moved_ready_at(
    p_ready_at timestamptz, p_attempt integer, p_old_until timestamptz,
    p_new_until timestamptz
) RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN COALESCE(p_attempt, 1) <= 1 THEN p_ready_at
        ELSE p_ready_at + COALESCE(p_new_until - p_old_until, interval '0')
    END
$$;
