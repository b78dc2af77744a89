//! How the server-side functions are declared: each one pins `search_path` to
//! `pg_catalog, pg_temp` (everything of its own is schema-qualified), so a caller's
//! `search_path` cannot route one of its names elsewhere, and plans its statements once per
//! connection (`plan_cache_mode = force_generic_plan`: with the default, PostgreSQL planned
//! the enqueue's and the claim's statements again on every call, a sixth of the server's
//! time in bench/'s trivial orchestration) without sequential scans (`enable_seqscan =
//! off`: a plan made while a queue was small is kept as it grows; tests/generic_plans.rs
//! checks that those plans still reach rows by key or index); except SQL-language STABLE and
//! IMMUTABLE functions that PostgreSQL inlines into the statements calling them (it does
//! only while they have no `SET` clause). Every other function is PL/pgSQL, whose plans
//! are kept per connection: PostgreSQL 15 plans the statements of an SQL function it does
//! not inline again on every call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::Harness;

const PINNED: [&str; 4] = [
    "search_path=pg_catalog, pg_temp",
    "plan_cache_mode=force_generic_plan",
    "enable_seqscan=off",
    "jit=off",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_pin_their_settings_unless_postgresql_inlines_them() {
    let h = Harness::new("fnsettings", |_| {}).await;
    let admin = common::admin_pool().await;
    let functions: Vec<(String, String, String, Option<Vec<String>>)> = sqlx::query_as(
        "SELECT p.proname::text, l.lanname::text, p.provolatile::text, p.proconfig
         FROM pg_proc AS p
         JOIN pg_namespace AS n ON n.oid = p.pronamespace
         JOIN pg_language AS l ON l.oid = p.prolang
         WHERE n.nspname = $1
         ORDER BY 1",
    )
    .bind(&h.schema)
    .fetch_all(&admin)
    .await
    .unwrap();
    let mut pinned = 0;
    for (name, language, volatility, config) in &functions {
        if language == "sql" {
            assert_ne!(
                volatility, "v",
                "{name}: a volatile SQL function is planned per call"
            );
            assert_eq!(config, &None, "{name}: inlinable, so no SET clause");
        } else {
            assert_eq!(language, "plpgsql", "{name}");
            assert_eq!(
                config.as_deref(),
                Some(&PINNED.map(String::from)[..]),
                "{name} (volatility {volatility})"
            );
            pinned += 1;
        }
    }
    assert!(
        pinned >= 21,
        "only {pinned} pinned functions in {functions:?}"
    );
    admin.close().await;
    h.drop().await;
}

/// An SQL function PostgreSQL does not inline (its body reads a table, say) runs through
/// the SQL-function executor, which plans its statement again on every call: each SQL
/// function here must disappear into its caller. Counted with `track_functions`: an inlined
/// function is never called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_functions_are_inlined_into_their_callers() {
    let h = Harness::new("fninline", |_| {}).await;
    let admin = common::admin_pool().await;
    let functions: Vec<(sqlx::postgres::types::Oid, String, Vec<String>)> = sqlx::query_as(
        "SELECT p.oid, p.proname::text,
                ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t)
         FROM pg_proc AS p
         JOIN pg_namespace AS n ON n.oid = p.pronamespace
         JOIN pg_language AS l ON l.oid = p.prolang
         WHERE n.nspname = $1 AND l.lanname = 'sql'
         ORDER BY 2",
    )
    .bind(&h.schema)
    .fetch_all(&admin)
    .await
    .unwrap();
    assert!(functions.len() >= 2, "SQL functions: {functions:?}");
    for (oid, name, arg_types) in &functions {
        // Not constants: PostgreSQL would call an IMMUTABLE function on them once while
        // planning instead of inlining it.
        let args: Vec<String> = arg_types
            .iter()
            .map(|t| format!("(CASE WHEN g.i > 0 THEN NULL END)::{t}"))
            .collect();
        let mut tx = admin.begin().await.unwrap();
        sqlx::query("SET LOCAL track_functions = 'all'")
            .execute(&mut *tx)
            .await
            .unwrap();
        let call = format!(
            "SELECT \"{}\".{name}({}) FROM generate_series(1, 3) AS g(i)",
            h.schema,
            args.join(", ")
        );
        sqlx::query(&call).execute(&mut *tx).await.unwrap();
        let calls: Option<i64> = sqlx::query_scalar("SELECT pg_stat_get_xact_function_calls($1)")
            .bind(oid)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        assert_eq!(
            calls.unwrap_or(0),
            0,
            "{name} was called, not inlined: {call}"
        );
        tx.rollback().await.unwrap();
    }
    admin.close().await;
    h.drop().await;
}
