-- $1 instance, $2 execution, $3 event ids, $4 event types, $5 event JSON texts.
SELECT __SCHEMA__.append_history($1, $2, $3, $4, $5)
