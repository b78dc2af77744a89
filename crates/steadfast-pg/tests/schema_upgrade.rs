//! Starting on a schema another build left: a server-side function whose installed text is
//! not this build's is installed again while work is queued, unless a newer build
//! installed a newer revision of it, which stays; and a schema made by a pre-release build
//! (before the migrations were folded into one baseline) is refused with the fix, not
//! half-upgraded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, start};
use duroxide::providers::Provider;
use steadfast_pg::{PollingMode, PostgresProvider, SetupError};

/// What `functions/stamp_lease.sql` defines, broken: every lease it stamps is already over,
/// so no claim could hand anything out while it is installed.
const BROKEN_STAMP_LEASE: &str = "CREATE OR REPLACE FUNCTION S.stamp_lease(
    p_instance text, p_token text, p_lock_ms float8, p_attempt integer, p_jitter real
) RETURNS float8 LANGUAGE sql AS $$ SELECT NULL::float8 $$";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_another_build_installed_is_installed_again() {
    let h = Harness::new("fnupgrade", |_| {}).await;
    h.provider
        .enqueue_for_orchestrator(start("queued"), None)
        .await
        .unwrap();
    h.exec(BROKEN_STAMP_LEASE, None).await;
    h.exec(
        "UPDATE S.schema_functions SET checksum = 'another build' WHERE name = 'stamp_lease'",
        None,
    )
    .await;

    let restarted = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    let (item, _, attempt) = restarted
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("the queued start is claimed with this build's stamp_lease");
    assert_eq!((item.instance.as_str(), attempt), ("queued", 1));
    let body = h
        .sql_f64(
            "SELECT count(*)::float8 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
             WHERE n.nspname = $1 AND p.proname = 'stamp_lease' AND p.prosrc LIKE '%NULL::float8%'",
            &h.schema,
        )
        .await;
    assert_eq!(body, 0.0, "the broken text is gone");
    restarted.close().await;
    h.drop().await;
}

/// An older build starting during a rolling upgrade leaves a newer build's revision of a
/// function in place (and works with it, by the rolling-upgrade rule). Without the revision
/// check it installed its own text over it, as it still does over an older revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_revision_another_build_installed_stays() {
    let h = Harness::new("fnnewer", |_| {}).await;
    let record = |revision: i32| {
        format!(
            "UPDATE S.schema_functions SET checksum = 'revision {revision} of another build', \
             revision = {revision} WHERE name = 'stamp_lease'"
        )
    };
    let recorded = "SELECT revision::float8 FROM S.schema_functions WHERE name = $1";

    h.exec(&record(1_000), None).await;
    let restarted = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    assert_eq!(
        h.sql_f64(recorded, "stamp_lease").await,
        1_000.0,
        "the newer revision is left in place"
    );
    restarted.close().await;

    h.exec(&record(0), None).await;
    let restarted = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    assert!(
        h.sql_f64(recorded, "stamp_lease").await >= 1.0,
        "an older revision is replaced by this build's"
    );
    restarted.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_made_by_a_pre_release_build_is_refused_with_the_fix() {
    let schema = common::unique_schema("prerelease");
    let admin = common::admin_pool().await;
    let quoted = format!("\"{schema}\"");
    sqlx::raw_sql(&include_str!("../queries/migrate_bootstrap.sql").replace("__SCHEMA__", &quoted))
        .execute(&admin)
        .await
        .unwrap();
    // What those builds recorded: 0001_initial (this checksum) up to 0009_ready_instances.
    common::admin_exec(
        &admin,
        &format!(
            "INSERT INTO {quoted}.schema_migrations (version, name, checksum)
             SELECT v, 'pre-release', CASE WHEN v = 1 THEN '68cd075f4e46bb4f' ELSE 'x' END
             FROM generate_series(1, 9) AS v"
        ),
        None,
    )
    .await;

    let err = PostgresProvider::connect_with_options(common::options(&schema, PollingMode::Listen))
        .await
        .err()
        .expect("a pre-release schema is refused");
    let SetupError::Migration(message) = err else {
        panic!("a migration error, got {err:?}");
    };
    assert!(
        message.contains("pre-release build")
            && message.contains(&format!("drop schema {schema} with everything in it")),
        "{message}"
    );
    admin.close().await;
    common::drop_schema(&schema).await;
}
