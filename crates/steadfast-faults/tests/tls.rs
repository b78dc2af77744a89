//! The provider over TLS, on a throwaway cluster that refuses plain connections and
//! presents a self-signed certificate for `localhost`: `sslmode=require` encrypts,
//! `verify-full` with the certificate as root connects, `verify-full` with another
//! issuer's certificate is refused, and a plain connection is refused by the server.

#[allow(dead_code)]
#[path = "faults/support/cluster.rs"]
mod cluster;

use std::path::Path;
use std::sync::Arc;

use duroxide::Client;
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use steadfast_pg::{PostgresProvider, ProviderOptions, SetupError};

use cluster::Cluster;

async fn tls_cluster() -> Cluster {
    tokio::task::spawn_blocking(Cluster::start_tls)
        .await
        .unwrap()
}

async fn connect(url: String) -> Result<PostgresProvider, SetupError> {
    let mut options = ProviderOptions::new(url).with_schema("tls_test");
    options.max_connections = 2;
    PostgresProvider::connect_with_options(options).await
}

fn verify_full(c: &Cluster, root: &Path, application: &str) -> String {
    format!(
        "{}?sslmode=verify-full&sslrootcert={}&application_name={application}",
        c.localhost_url(),
        root.display()
    )
}

/// The test's own connection, over TLS too.
async fn check_connection(c: &Cluster) -> PgConnection {
    let (root, _) = c.certificate();
    PgConnection::connect(&verify_full(c, &root, "steadfast-tls-check"))
        .await
        .expect("the check connection over TLS")
}

/// How many of `application`'s connections are open, and whether all of them use TLS.
async fn encrypted(c: &Cluster, application: &str) -> (i64, bool) {
    let mut check = check_connection(c).await;
    let row: (i64, Option<bool>) = sqlx::query_as(
        "SELECT count(*), bool_and(s.ssl) FROM pg_stat_ssl AS s \
         JOIN pg_stat_activity AS a USING (pid) WHERE a.application_name = $1",
    )
    .bind(application)
    .fetch_one(&mut check)
    .await
    .unwrap();
    (row.0, row.1.unwrap_or(false))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_require_runs_the_provider_over_tls() {
    let c = tls_cluster().await;
    let url = format!("{}?sslmode=require&application_name=steadfast-tls", c.url());
    let provider = Arc::new(connect(url).await.expect("connects with sslmode=require"));
    // Migrated and usable: a start goes through the encrypted connections into the queue.
    let client = Client::new(provider.clone());
    client
        .start_orchestration("tls-1", "Anything", "{}")
        .await
        .unwrap();
    let queued: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM tls_test.orchestrator_queue WHERE instance_id = 'tls-1'",
    )
    .fetch_one(&mut check_connection(&c).await)
    .await
    .unwrap();
    assert_eq!(queued, 1, "the start is queued");
    let (connections, all_tls) = encrypted(&c, "steadfast-tls").await;
    assert!(connections > 0, "the provider's connections are open");
    assert!(all_tls, "every provider connection uses TLS");
    provider.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_full_checks_the_certificate_and_the_host_name() {
    let c = tls_cluster().await;
    let (root, other) = c.certificate();
    let provider = connect(verify_full(&c, &root, "steadfast-tls-verified"))
        .await
        .expect("verify-full against the server's own certificate connects");
    let (connections, all_tls) = encrypted(&c, "steadfast-tls-verified").await;
    assert!(
        connections > 0 && all_tls,
        "{connections} connections, all TLS: {all_tls}"
    );
    provider.close().await;

    let refused = connect(verify_full(&c, &other, "steadfast-tls-other"))
        .await
        .err()
        .expect("a certificate of another issuer is refused");
    assert!(
        matches!(refused, SetupError::Connect(_)),
        "a connection error: {refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_plain_connections() {
    let c = tls_cluster().await;
    let refused = connect(format!("{}?sslmode=disable", c.url()))
        .await
        .err()
        .expect("sslmode=disable is refused by this server");
    assert!(
        refused.to_string().contains("no encryption") || refused.to_string().contains("pg_hba"),
        "{refused}"
    );
}
