//! Paged, filtered listing of instances (`PostgresProvider::list_instance_page`): newest
//! first, filters applied in the database, and a walk through the pages stays exact while
//! new instances are created between pages.

mod common;

use common::harness::{Harness, completed_turn, running_metadata, start, started_event};
use duroxide::providers::{ExecutionMetadata, Provider};
use steadfast_pg::{InstanceQuery, MAX_FILTER_TIME_MS, MAX_INSTANCE_PAGE};

fn page(limit: u32, cursor: Option<String>) -> InstanceQuery {
    InstanceQuery {
        limit,
        cursor,
        ..InstanceQuery::default()
    }
}

/// Every id a walk through the pages of `query` returns, page by page; `between` runs
/// after each page.
async fn walk(
    h: &Harness,
    query: InstanceQuery,
    mut between: impl AsyncFnMut(usize),
) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let got = h
            .provider
            .list_instance_page(&InstanceQuery {
                cursor: cursor.clone(),
                ..query.clone()
            })
            .await
            .unwrap();
        pages.push(
            got.instances
                .iter()
                .map(|i| i.instance_id.clone())
                .collect(),
        );
        between(pages.len()).await;
        match got.next_cursor {
            Some(c) => cursor = Some(c),
            None => return pages,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_stay_exact_while_instances_are_created() {
    let h = Harness::new("pages", |_| {}).await;
    let mut ids: Vec<String> = (0..23).map(|n| format!("inst-{n:02}")).collect();
    for id in &ids {
        h.create_instance(id).await;
    }
    let pages = walk(&h, page(10, None), async |n| {
        h.create_instance(&format!("late-{n}")).await;
    })
    .await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [10, 10, 3]);
    ids.reverse();
    assert_eq!(pages.concat(), ids, "newest first, each exactly once");
    let fresh = h.provider.list_instance_page(&page(2, None)).await.unwrap();
    assert_eq!(
        fresh
            .instances
            .iter()
            .map(|i| i.instance_id.as_str())
            .collect::<Vec<_>>(),
        ["late-3", "late-2"]
    );
    h.drop().await;
}

async fn ids(h: &Harness, query: InstanceQuery) -> Vec<String> {
    let got = h.provider.list_instance_page(&query).await.unwrap();
    got.instances.into_iter().map(|i| i.instance_id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_apply_before_paging() {
    let h = Harness::new("page_filters", |_| {}).await;
    let p = &h.provider;
    h.create_instance("running").await;
    p.enqueue_for_orchestrator(start("done"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("done").await;
    let (mut events, metadata) = completed_turn("done", 2);
    events.insert(0, started_event("done"));
    p.ack_orchestration_item(&token, 1, events, vec![], vec![], metadata, vec![])
        .await
        .unwrap();
    p.enqueue_for_orchestrator(start("child"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("child").await;
    p.ack_orchestration_item(
        &token,
        1,
        vec![started_event("child")],
        vec![],
        vec![],
        ExecutionMetadata {
            parent_instance_id: Some("running".into()),
            ..running_metadata()
        },
        vec![],
    )
    .await
    .unwrap();
    let completed = InstanceQuery {
        statuses: Some(vec!["Completed".into()]),
        ..page(10, None)
    };
    assert_eq!(ids(&h, completed).await, ["done"]);
    let running = InstanceQuery {
        statuses: Some(vec!["Running".into()]),
        ..page(1, None)
    };
    let first = p.list_instance_page(&running).await.unwrap();
    assert_eq!(first.instances[0].instance_id, "child");
    let rest = InstanceQuery {
        cursor: first.next_cursor,
        ..running
    };
    assert_eq!(ids(&h, rest).await, ["running"]);
    let children = InstanceQuery {
        parent_instance_id: Some("running".into()),
        ..page(10, None)
    };
    assert_eq!(ids(&h, children).await, ["child"]);
    let named = InstanceQuery {
        orchestration_name: Some("Orch".into()),
        ..page(10, None)
    };
    assert_eq!(ids(&h, named).await.len(), 3);
    let other = InstanceQuery {
        orchestration_name: Some("Other".into()),
        ..page(10, None)
    };
    assert!(ids(&h, other).await.is_empty());
    let future = InstanceQuery {
        created_from_ms: Some(MAX_FILTER_TIME_MS),
        ..page(10, None)
    };
    assert!(ids(&h, future).await.is_empty());
    let past = InstanceQuery {
        created_before_ms: Some(0),
        ..page(10, None)
    };
    assert!(ids(&h, past).await.is_empty());
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_limits_and_cursors_are_refused_with_the_rule() {
    let h = Harness::new("page_input", |_| {}).await;
    for limit in [0, MAX_INSTANCE_PAGE + 1] {
        let e = h
            .provider
            .list_instance_page(&page(limit, None))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("limit must be between 1 and 1000"),
            "{e}"
        );
    }
    let e = h
        .provider
        .list_instance_page(&InstanceQuery {
            created_before_ms: Some(-1),
            ..page(5, None)
        })
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("created_before_ms must be between 0 and"),
        "{e}"
    );
    let e = h
        .provider
        .list_instance_page(&page(5, Some("not-a-cursor".into())))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cursor"), "{e}");
    h.drop().await;
}
