-- Per item: $1 work item, $2 instance, $3 execution, $4 activity id, $5 session, $6 tag.
SELECT __SCHEMA__.enqueue_worker($1, $2, $3, $4, $5, $6)
