//! Statements per orchestration from `pg_stat_statements`, where the server has it loaded
//! (`shared_preload_libraries`): which statements a trivial orchestration's transactions
//! are made of. Off by default on most servers, so every reading here is optional.

use serde_json::{Value, json};

use crate::common::{Env, admin_pool, round2};

/// Clears the server's statement counters; false when `pg_stat_statements` is not loaded
/// (or this role may not reset it), and then nothing is recorded.
pub async fn reset(env: &Env) -> bool {
    let Ok(pool) = admin_pool(env).await else {
        return false;
    };
    let loaded = sqlx::query_scalar::<_, bool>(
        "SELECT 'pg_stat_statements' = ANY (string_to_array(
                    replace(current_setting('shared_preload_libraries'), ' ', ''), ','))",
    )
    .fetch_one(&pool)
    .await
    .unwrap_or(false);
    let ok = loaded
        && sqlx::query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            .execute(&pool)
            .await
            .is_ok()
        && sqlx::query("SELECT pg_stat_statements_reset()")
            .execute(&pool)
            .await
            .is_ok();
    pool.close().await;
    ok
}

/// The 80 statements of this database with the most execution time since `reset` (which
/// takes in every statement a trivial orchestration runs, however cheap), each with its
/// calls, rows and execution time (server time inside the statement, ms) per completed
/// orchestration; `Null` when there is nothing to read.
pub async fn per_orchestration(env: &Env, completed: u64) -> Value {
    let Ok(pool) = admin_pool(env).await else {
        return Value::Null;
    };
    let rows: Result<Vec<(String, i64, i64, f64)>, _> = sqlx::query_as(
        "SELECT regexp_replace(query, '\\s+', ' ', 'g'), calls, rows, total_exec_time
         FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY total_exec_time DESC LIMIT 80",
    )
    .fetch_all(&pool)
    .await;
    pool.close().await;
    let Ok(rows) = rows else {
        return Value::Null;
    };
    let per = |n: i64| round2(n as f64 / completed.max(1) as f64);
    Value::Array(
        rows.into_iter()
            .map(|(query, calls, rows, exec_ms)| {
                json!({
                    "query": query.chars().take(160).collect::<String>(),
                    "calls_per_orchestration": per(calls),
                    "rows_per_orchestration": per(rows),
                    "exec_ms_per_orchestration":
                        round2(exec_ms * 100.0 / completed.max(1) as f64) / 100.0,
                })
            })
            .collect(),
    )
}
