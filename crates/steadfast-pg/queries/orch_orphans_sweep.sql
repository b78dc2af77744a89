-- One orphan sweep: see functions/sweep_orphans.sql.
-- $1 orphan timeout ms, $2 waiting messages to look at, $3 the dead letters' error text.
SELECT orphan_instance AS instance_id, orphan_messages AS messages, orphan_kinds AS kinds
FROM __SCHEMA__.sweep_orphans($1, $2, $3)
