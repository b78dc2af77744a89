-- Migrations may rewrite large tables and wait for another process's migration: they run
-- without the provider's statement_timeout (this transaction only).
SET LOCAL statement_timeout = 0
