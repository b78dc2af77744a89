-- doctor: the dead letters. One row: total, newest_age_s, by_reason and by_queue (JSON
-- counts), and newest (JSON: the five newest).
SELECT count(*)::float8 AS total,
       extract(epoch FROM (clock_timestamp() - max(dead_at)))::float8 AS newest_age_s,
       (SELECT json_agg(x) FROM (SELECT reason, count(*) AS count FROM __SCHEMA__.dead_letters
                                 GROUP BY reason ORDER BY count(*) DESC, reason LIMIT 10) AS x) AS by_reason,
       (SELECT json_agg(x) FROM (SELECT queue, count(*) AS count FROM __SCHEMA__.dead_letters
                                 GROUP BY queue ORDER BY queue) AS x) AS by_queue,
       (SELECT json_agg(x) FROM (SELECT id, queue, instance_id, reason, attempt_count, max_attempts,
                                        extract(epoch FROM (clock_timestamp() - dead_at))::float8 AS age_s
                                 FROM __SCHEMA__.dead_letters ORDER BY id DESC LIMIT 5) AS x) AS newest
FROM __SCHEMA__.dead_letters
