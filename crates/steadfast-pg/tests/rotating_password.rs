//! A password that changes while the provider runs (an expiring access token, e.g. a
//! Microsoft Entra ID token): after `RotatingPassword::set`, every connection the provider
//! opens uses the new one, the wake-up publisher's included. Against a role that logs in
//! with a password (scram-sha-256 over TCP, set up by scripts/machine-setup.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::start;
use duroxide::providers::Provider;
use sqlx::postgres::PgListener;
use steadfast_pg::{PollingMode, PostgresProvider, RotatingPassword};

/// Members of this role log in with a password (scripts/machine-setup.sh, `ensure_password_auth`).
const PASSWORD_AUTH_ROLE: &str = "steadfast_password_auth";
const RECOVERY: Duration = Duration::from_secs(20);

/// The test database's URL as `role`, with `password` if given.
fn url_as(role: &str, password: Option<&str>) -> String {
    let mut url = url::Url::parse(&common::database_url()).unwrap();
    url.set_username(role).unwrap();
    url.set_password(password).unwrap();
    url.to_string()
}

async fn database_name() -> String {
    let admin = common::admin_pool().await;
    let name = sqlx::query_scalar("SELECT current_database()")
        .fetch_one(&admin)
        .await
        .unwrap();
    admin.close().await;
    name
}

/// A login role that must give a password, able to create its schema.
async fn password_role(name: &str, password: &str) {
    let database = database_name().await;
    let admin = common::admin_pool().await;
    for sql in [
        format!("CREATE ROLE {name} LOGIN PASSWORD '{password}' IN ROLE {PASSWORD_AUTH_ROLE}"),
        format!("GRANT CREATE ON DATABASE \"{database}\" TO {name}"),
    ] {
        common::admin_exec(&admin, &sql, None).await;
    }
    admin.close().await;
    let wrong = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&url_as(name, Some("not-the-password")))
        .await;
    assert!(
        wrong.is_err(),
        "role {name} logged in with a wrong password: the server does not ask members of \
         {PASSWORD_AUTH_ROLE} for one (run `source scripts/machine-setup.sh && \
         prepare_test_machine`, which adds their scram-sha-256 lines to pg_hba.conf)"
    );
}

async fn admin_sql(sql: &str) {
    let admin = common::admin_pool().await;
    common::admin_exec(&admin, sql, None).await;
    admin.close().await;
}

/// Retry `op` (its errors are retryable: a connection the server ended) until it succeeds.
async fn eventually<F, Fut, T, E>(what: &str, mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    let deadline = tokio::time::Instant::now() + RECOVERY;
    loop {
        match op().await {
            Ok(v) => return v,
            Err(e) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{what} still failing after {RECOVERY:?}: {e}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_opened_after_a_rotation_use_the_new_password() {
    let suffix: u32 = rand::random();
    let role = format!("sft_rotating_{suffix:08x}");
    password_role(&role, "first").await;
    let schema = common::unique_schema("rotating_password");
    let password = RotatingPassword::new("first");
    let mut options = common::options(&schema, PollingMode::Listen);
    options.database_url = url_as(&role, None);
    options.max_connections = 3;
    options.password = Some(password.feed());
    let provider = PostgresProvider::connect_with_options(options)
        .await
        .expect("connects with the first password");
    provider
        .enqueue_for_orchestrator(start("before"), None)
        .await
        .unwrap();

    let mut listener = PgListener::connect(&common::database_url()).await.unwrap();
    let channel: String = sqlx::query_scalar(include_str!("../queries/notify_channel.sql"))
        .bind(&schema)
        .fetch_one(&common::admin_pool().await)
        .await
        .unwrap();
    listener.listen(&channel).await.unwrap();
    while tokio::time::timeout(Duration::from_millis(300), listener.recv())
        .await
        .is_ok()
    {}

    // The token expires: the server now wants the second password, and every connection
    // the provider had (pool, listener, publisher) is gone.
    admin_sql(&format!("ALTER ROLE {role} PASSWORD 'second'")).await;
    password.set("second");
    admin_sql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"
    ))
    .await;

    eventually("an enqueue on a new connection", || {
        provider.enqueue_for_orchestrator(start("after"), None)
    })
    .await;
    let heard = tokio::time::timeout(RECOVERY, listener.recv()).await;
    assert!(
        matches!(heard, Ok(Ok(_))),
        "the wake-up publisher sent nothing after the rotation: {heard:?}"
    );
    // Claims take ready instances in no fixed order: both starts must be claimable.
    let mut claimed = Vec::new();
    for _ in 0..2 {
        let (item, _, _) = eventually("a claim on a new connection", || {
            provider.fetch_orchestration_item(Duration::from_secs(30), Duration::ZERO, None)
        })
        .await
        .expect("both starts are claimable");
        claimed.push(item.instance);
    }
    claimed.sort();
    assert_eq!(claimed, ["after", "before"]);

    provider.close().await;
    common::drop_schema(&schema).await;
    admin_sql(&format!(
        "REVOKE ALL ON DATABASE \"{}\" FROM {role}",
        database_name().await
    ))
    .await;
    admin_sql(&format!("DROP ROLE {role}")).await;
}
