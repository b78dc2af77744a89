//! How the server-side functions are declared: each one pins `search_path` to
//! `pg_catalog, pg_temp` (everything of its own is schema-qualified), so a caller's
//! `search_path` cannot route one of its names elsewhere; except SQL-language STABLE and
//! IMMUTABLE functions, which PostgreSQL inlines into the statements calling them only
//! while they have no `SET` clause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::Harness;

const PINNED: &str = "search_path=pg_catalog, pg_temp";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_pin_search_path_unless_postgresql_inlines_them() {
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
        if language == "sql" && volatility != "v" {
            assert_eq!(config, &None, "{name}: inlinable, so no SET clause");
        } else {
            assert_eq!(
                config.as_deref(),
                Some(&[PINNED.to_string()][..]),
                "{name} ({language}, volatility {volatility})"
            );
            pinned += 1;
        }
    }
    assert!(
        pinned >= 18,
        "only {pinned} pinned functions in {functions:?}"
    );
    admin.close().await;
    h.drop().await;
}
