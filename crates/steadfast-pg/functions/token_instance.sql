-- The instance an orchestrator lock token names, so that a token finds its lease row by
-- primary key (no index on lock_token: a lease stamp then stays a HOT update). Tokens are
-- 'sf2.<nonce>.<generation>.<hex(instance id in UTF-8)>' (functions/claim_orchestration.sql);
-- any other text, including hex that is not UTF-8 PostgreSQL accepts (valid, no NUL),
-- gives NULL, never an error: a caller's garbage finds no lease. The pattern's hex pairs
-- spell exactly the UTF-8 sequences of RFC 3629 (what convert_from accepts). STABLE, as
-- convert_from is: an IMMUTABLE function calling it would not be inlined.
CREATE OR REPLACE FUNCTION __SCHEMA__.token_instance(p_token text)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN p_token ~ ('^sf2\.[0-9a-f]{32}\.[0-9]{1,18}\.('
                        || '0[1-9a-f]|[1-7][0-9a-f]'
                        || '|(c[2-9a-f]|d[0-9a-f])[89ab][0-9a-f]'
                        || '|e0[ab][0-9a-f][89ab][0-9a-f]'
                        || '|(e[1-9a-c]|e[ef])[89ab][0-9a-f][89ab][0-9a-f]'
                        || '|ed[89][0-9a-f][89ab][0-9a-f]'
                        || '|f0(9[0-9a-f]|[ab][0-9a-f])[89ab][0-9a-f][89ab][0-9a-f]'
                        || '|f[1-3][89ab][0-9a-f][89ab][0-9a-f][89ab][0-9a-f]'
                        || '|f48[0-9a-f][89ab][0-9a-f][89ab][0-9a-f]'
                        || ')*$')
        THEN convert_from(decode(split_part(p_token, '.', 4), 'hex'), 'UTF8')
    END
$$;
