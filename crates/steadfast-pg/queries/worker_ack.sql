-- See ack_activity (migration 0003). $1 token, $2 completion's instance, $3 completion.
SELECT __SCHEMA__.ack_activity($1, $2, $3)
