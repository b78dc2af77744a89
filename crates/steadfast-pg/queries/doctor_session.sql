-- doctor: the session it runs in. One row: db (the database's name), read_only (the
-- transaction_read_only setting, 'on' once doctor_session_limits ran) and checked_at (the
-- database clock, as JSON text).
SELECT current_database() AS db,
       current_setting('transaction_read_only') AS read_only,
       to_json(clock_timestamp()) AS checked_at
