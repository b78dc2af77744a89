-- doctor: make this session read-only and give every statement of it a statement timeout ($1)
-- and a lock timeout ($2), so that no doctor statement waits behind a lock for long. Each
-- statement then runs in a transaction of its own. Returns one row of the values set.
SELECT set_config('default_transaction_read_only', 'on', false) AS read_only,
       set_config('statement_timeout', $1::text, false) AS statement_timeout,
       set_config('lock_timeout', $2::text, false) AS lock_timeout
