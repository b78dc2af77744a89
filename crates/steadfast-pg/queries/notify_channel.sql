-- The LISTEN channel for this schema (src/wake.rs; ended executions on its name + "_end").
SELECT 'steadfast_' || left(md5($1), 16)
