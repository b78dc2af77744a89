-- The work item (worker_queue.id) a worker lock token names, so that a token finds its row
-- by primary key (no index on lock_token: a claim then stays a HOT update). Tokens are
-- 'sfw.<nonce>.<id>' (functions/claim_work_item.sql); any other text gives NULL, never an error.
CREATE OR REPLACE FUNCTION __SCHEMA__.token_work_item(p_token text)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_token ~ '^sfw\.[0-9a-f]{32}\.[0-9]{1,18}$'
                THEN split_part(p_token, '.', 3)::bigint END
$$;
