//! The one-statement status read (`PostgresProvider::orchestration_status`, which
//! `wait_for_orchestration` uses) answers what duroxide's `Client::get_orchestration_status`
//! answers from the whole history, for every state a runtime leaves an instance in.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use duroxide::providers::Provider;
use duroxide::runtime::Runtime;
use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{
    ActivityContext, Client, OrchestrationContext, OrchestrationRegistry, OrchestrationStatus,
    RuntimeOptions,
};
use steadfast_pg::{PollingMode, PostgresProvider};

fn orchestrations() -> OrchestrationRegistry {
    OrchestrationRegistry::builder()
        .register(
            "Done",
            |ctx: OrchestrationContext, input: String| async move {
                ctx.schedule_activity("Echo", input).await
            },
        )
        .register(
            "Fails",
            |_ctx: OrchestrationContext, _input: String| async move {
                Err::<String, String>("boom".into())
            },
        )
        .register(
            "StatusThenWait",
            |ctx: OrchestrationContext, _input: String| async move {
                ctx.set_custom_status("phase-1");
                let first = ctx.schedule_wait("go").await;
                ctx.set_custom_status("phase-2");
                let second = ctx.schedule_wait("go-again").await;
                Ok(format!("{first}+{second}"))
            },
        )
        .register(
            "ContinuesOnce",
            |ctx: OrchestrationContext, input: String| async move {
                if input == "first" {
                    ctx.continue_as_new("second").await
                } else {
                    let go = ctx.schedule_wait("go").await;
                    Ok(format!("{input}:{go}"))
                }
            },
        )
        .build()
}

fn activities() -> ActivityRegistry {
    ActivityRegistry::builder()
        .register("Echo", |_ctx: ActivityContext, input: String| async move {
            Ok(format!("echo({input})"))
        })
        .build()
}

/// Both reads agree; returns the status. The runtime moves the instance on meanwhile, so
/// duroxide's read is compared only when ours, read before and after it, did not change
/// (else the three reads are made again).
async fn both_reads(
    provider: &PostgresProvider,
    client: &Client,
    instance: &str,
) -> OrchestrationStatus {
    for _ in 0..100 {
        let before = provider.orchestration_status(instance).await.unwrap();
        let duroxides = client.get_orchestration_status(instance).await.unwrap();
        let after = provider.orchestration_status(instance).await.unwrap();
        if before == after {
            assert_eq!(before, duroxides, "instance {instance}");
            return before;
        }
    }
    panic!("instance {instance} changed during each of 100 attempts to compare its reads");
}

/// Until the one-statement read of `instance` satisfies `done` (checking duroxide's read
/// agrees at every step).
async fn until(
    provider: &PostgresProvider,
    client: &Client,
    instance: &str,
    done: impl Fn(&OrchestrationStatus) -> bool,
) -> OrchestrationStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = both_reads(provider, client, instance).await;
        if done(&status) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "instance {instance} stayed {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn running_with(custom: Option<&str>) -> impl Fn(&OrchestrationStatus) -> bool + '_ {
    move |s| matches!(s, OrchestrationStatus::Running { custom_status, .. } if custom_status.as_deref() == custom)
}

fn ended(s: &OrchestrationStatus) -> bool {
    matches!(
        s,
        OrchestrationStatus::Completed { .. } | OrchestrationStatus::Failed { .. }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_one_statement_status_read_agrees_with_duroxide_s_in_every_state() {
    let schema = common::unique_schema("status_reads");
    let provider = common::provider_with(common::options(&schema, PollingMode::Listen)).await;
    let store: Arc<dyn Provider> = provider.clone();
    let client = Client::new(store.clone());

    // Nothing, and a start nobody has run yet.
    assert_eq!(
        both_reads(&provider, &client, "unknown").await,
        OrchestrationStatus::NotFound
    );
    client
        .start_orchestration("done", "Done", "x")
        .await
        .unwrap();
    assert_eq!(
        both_reads(&provider, &client, "done").await,
        OrchestrationStatus::NotFound
    );

    let options = RuntimeOptions {
        dispatcher_min_poll_interval: Duration::from_millis(20),
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::start_with_options(store, activities(), orchestrations(), options).await;
    for (instance, name, input) in [
        ("fails", "Fails", "x"),
        ("status", "StatusThenWait", "x"),
        ("continues", "ContinuesOnce", "first"),
        ("cancelled", "StatusThenWait", "x"),
    ] {
        client
            .start_orchestration(instance, name, input)
            .await
            .unwrap();
    }

    let done = until(&provider, &client, "done", ended).await;
    assert!(
        matches!(&done, OrchestrationStatus::Completed { output, custom_status: None, custom_status_version: 0 } if output == "echo(x)"),
        "{done:?}"
    );
    let failed = until(&provider, &client, "fails", ended).await;
    assert!(
        matches!(failed, OrchestrationStatus::Failed { .. }),
        "{failed:?}"
    );

    // Running with a custom status, then a newer one, then completed keeping it.
    until(&provider, &client, "status", running_with(Some("phase-1"))).await;
    client.raise_event("status", "go", "a").await.unwrap();
    until(&provider, &client, "status", running_with(Some("phase-2"))).await;
    client.raise_event("status", "go-again", "b").await.unwrap();
    let completed = until(&provider, &client, "status", ended).await;
    assert!(
        matches!(&completed, OrchestrationStatus::Completed { output, custom_status: Some(c), custom_status_version: v } if output == "a+b" && c == "phase-2" && *v >= 2),
        "{completed:?}"
    );

    // The first execution continued as new: the second, running, is what counts.
    until(&provider, &client, "continues", running_with(None)).await;
    let executions = client.list_executions("continues").await.unwrap();
    assert_eq!(executions.len(), 2, "{executions:?}");
    client.raise_event("continues", "go", "g").await.unwrap();
    let continued = until(&provider, &client, "continues", ended).await;
    assert!(
        matches!(&continued, OrchestrationStatus::Completed { output, .. } if output == "second:g"),
        "{continued:?}"
    );

    // Cancelled while waiting: failed, with the custom status it had.
    until(
        &provider,
        &client,
        "cancelled",
        running_with(Some("phase-1")),
    )
    .await;
    client.cancel_instance("cancelled", "stop").await.unwrap();
    let cancelled = until(&provider, &client, "cancelled", ended).await;
    assert!(
        matches!(&cancelled, OrchestrationStatus::Failed { custom_status: Some(c), .. } if c == "phase-1"),
        "{cancelled:?}"
    );

    runtime.shutdown(Some(1_000)).await;
    provider.close().await;
    common::drop_schema(&schema).await;
}

/// An event whose stored type says terminal but whose text does not decode is an error
/// naming the instance, as duroxide's read of the whole history reports it, never a status
/// made up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_terminal_event_is_an_error_not_a_status() {
    let h = common::harness::Harness::new("status_undecodable", |_| {}).await;
    h.create_instance("broken").await;
    h.exec(
        "INSERT INTO S.history (instance_id, execution_id, event_id, event_type, event_data)
         VALUES ('broken', 1, 2, 'OrchestrationCompleted', '{not json')",
        None,
    )
    .await;
    let err = h
        .provider
        .orchestration_status("broken")
        .await
        .expect_err("an undecodable terminal event");
    assert!(!err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains("'broken'"), "{err}");
    h.drop().await;
}
