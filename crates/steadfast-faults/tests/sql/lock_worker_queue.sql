-- Block every statement on the worker queue until this transaction ends.
LOCK TABLE __SCHEMA__.worker_queue IN ACCESS EXCLUSIVE MODE
