-- When a lease that ran out without ack or abandon becomes claimable again: its end
-- plus the redelivery backoff min(cap, base * 2^(attempt - 1)) * (1 + jitter).
CREATE OR REPLACE FUNCTION __SCHEMA__.redelivery_at(
    p_locked_until timestamptz, p_attempt integer, p_jitter real,
    p_base_ms float8, p_cap_ms float8
) RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT p_locked_until
         + LEAST(p_cap_ms, p_base_ms * power(2, LEAST(GREATEST(p_attempt, 1) - 1, 62)))
           * (1 + p_jitter) * interval '1 millisecond'
$$;
