-- See functions/dead_letter_handed_out.sql. $1 instance, $2 execution, $3 max attempts,
-- $4 reason, $5 error. Returns how many messages moved.
SELECT __SCHEMA__.dead_letter_handed_out($1, $2, $3, $4, $5)
