//! Upgrading a schema that already holds work: the migrations of this build applied to a
//! schema another build left at an older version, with messages queued.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::harness::{LONG, start, started_event};
use duroxide::providers::{Provider, WorkItem};
use steadfast_pg::PollingMode;

/// Migrations 1 to 5 as version 5 of this crate applied them.
const VERSION_5: &[(i32, &str, &str)] = &[
    (1, "initial", include_str!("../migrations/0001_initial.sql")),
    (
        2,
        "claim_functions",
        include_str!("../migrations/0002_claim_functions.sql"),
    ),
    (
        3,
        "turn_functions",
        include_str!("../migrations/0003_turn_functions.sql"),
    ),
    (
        4,
        "give_back",
        include_str!("../migrations/0004_give_back.sql"),
    ),
    (
        5,
        "execution_end_notify",
        include_str!("../migrations/0005_execution_end_notify.sql"),
    ),
];

/// The checksum migrate.rs records (FNV-1a 64).
fn checksum(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    format!("{hash:016x}")
}

fn json(item: &WorkItem) -> String {
    serde_json::to_string(item).unwrap()
}

/// A version-5 schema with a started instance that has an event queued, a queued start,
/// and an event to an id nothing started: after the upgrade the first two are claimable
/// and the third waits outside the claim's scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_5_queues_are_classified_on_upgrade() {
    let schema = common::unique_schema("upgrade_v5");
    let quoted = format!("\"{schema}\"");
    let admin = common::admin_pool().await;
    let run = |sql: String| {
        let admin = admin.clone();
        async move {
            let mut tx = admin.begin().await.unwrap();
            sqlx::raw_sql(&sql).execute(&mut *tx).await.unwrap();
            tx.commit().await.unwrap();
        }
    };
    run(include_str!("../queries/migrate_bootstrap.sql").replace("__SCHEMA__", &quoted)).await;
    for (version, name, text) in VERSION_5 {
        run(text.replace("__SCHEMA__", &quoted)).await;
        run(format!(
            "INSERT INTO {quoted}.schema_migrations (version, name, checksum) VALUES ({version}, '{name}', '{}')",
            checksum(text)
        ))
        .await;
    }
    let raised = |instance: &str| WorkItem::ExternalRaised {
        instance: instance.into(),
        name: "go".into(),
        data: "1".into(),
    };
    let started = serde_json::to_string(&started_event("alive")).unwrap();
    run(format!(
        "INSERT INTO {quoted}.instances (instance_id, orchestration_name, orchestration_version)
             VALUES ('alive', 'Orch', '1.0.0');
         INSERT INTO {quoted}.executions (instance_id, execution_id) VALUES ('alive', 1);
         INSERT INTO {quoted}.history (instance_id, execution_id, event_id, event_type, event_data)
             VALUES ('alive', 1, 1, 'OrchestrationStarted', $json${started}$json$);
         SELECT {quoted}.enqueue_orchestrator(
             ARRAY['alive', 'fresh', 'ghost'],
             ARRAY[$json${}$json$, $json${}$json$, $json${}$json$],
             ARRAY[NULL, NULL, NULL]::float8[], ARRAY[NULL, NULL, NULL]::float8[]);",
        json(&raised("alive")),
        json(&start("fresh")),
        json(&raised("ghost")),
    ))
    .await;

    let provider = common::provider_with(common::options(&schema, PollingMode::Listen)).await;
    let waiting: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT instance_id FROM {quoted}.orchestrator_queue WHERE waiting ORDER BY 1"
    ))
    .fetch_all(&admin)
    .await
    .unwrap();
    assert_eq!(waiting, vec!["ghost".to_string()]);
    let mut claimed = HashSet::new();
    for _ in 0..2 {
        let (item, _, _) = provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("claimable work after the upgrade");
        claimed.insert(item.instance);
    }
    assert_eq!(
        claimed,
        HashSet::from(["alive".to_string(), "fresh".to_string()])
    );
    assert!(
        provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    provider.close().await;
    admin.close().await;
    common::drop_schema(&schema).await;
}
