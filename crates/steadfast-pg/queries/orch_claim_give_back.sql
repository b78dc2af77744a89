-- See give_back_claim (migration 0004). $1 lock token.
SELECT __SCHEMA__.give_back_claim($1)
