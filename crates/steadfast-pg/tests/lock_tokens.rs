//! Lock tokens name their rows: the database finds a token's lease or work item through
//! `token_instance` / `token_work_item` (no index on a token), which turn any text at all
//! into a row key or NULL, never into an error, and a token that names no live row is
//! refused like any unknown token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, activity_item, running_metadata, start};
use duroxide::providers::{Provider, TagFilter};

async fn decoded(h: &Harness, function: &str, token: Option<&str>) -> Option<String> {
    let admin = common::admin_pool().await;
    let got: Option<String> = sqlx::query_scalar(&h.sql(&format!("SELECT S.{function}($1)::text")))
        .persistent(false)
        .bind(token)
        .fetch_one(&admin)
        .await
        .unwrap_or_else(|e| panic!("{function}({token:?}) failed: {e}"));
    admin.close().await;
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_names_its_instance_and_garbage_names_nothing() {
    let h = Harness::new("token_instance", |_| {}).await;
    let nonce = "0123456789abcdef".repeat(2);
    for id in [
        "a",
        "order-123",
        "with.dots and spaces",
        "ünïcödé/🚀",
        "日本",
        "",
    ] {
        let hex: String = id.bytes().map(|b| format!("{b:02x}")).collect();
        let token = format!("sf2.{nonce}.42.{hex}");
        assert_eq!(
            decoded(&h, "token_instance", Some(&token)).await.as_deref(),
            Some(id)
        );
    }
    for garbage in [
        "".to_string(),
        "invalid-token".into(),
        format!("sf2.{nonce}.42.6"),        // odd hex
        format!("sf2.{nonce}.42.zz"),       // not hex
        format!("sf2.{nonce}.42.00"),       // NUL
        format!("sf2.{nonce}.42.ff"),       // not UTF-8
        format!("sf2.{nonce}.42.c0af"),     // overlong
        format!("sf2.{nonce}.42.eda080"),   // surrogate
        format!("sf2.{nonce}.42.f4908080"), // past U+10FFFF
        format!("sf2.{nonce}.42.e282"),     // cut short
        format!("sf2.{nonce}.x.61"),
        format!("sf2.{nonce}.42.61.62"),
        format!("sf1.{nonce}.61"),
        format!("sfw.{nonce}.7"),
        format!("SF2.{nonce}.42.61"),
    ] {
        assert_eq!(
            decoded(&h, "token_instance", Some(&garbage)).await,
            None,
            "{garbage}"
        );
    }
    assert_eq!(decoded(&h, "token_instance", None).await, None);
    h.drop().await;
}

/// The pattern `token_instance` checks its hex with must admit exactly the byte sequences
/// `convert_from` accepts as UTF-8: every one- and two-byte sequence, and three- and
/// four-byte ones built from the bytes at every boundary of RFC 3629's table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_utf8_check_agrees_with_postgresql() {
    let h = Harness::new("token_utf8", |_| {}).await;
    let check = h.sql(
        "DO $$
        DECLARE
            b text[] := ARRAY['00','01','7f','80','8f','90','9f','a0','bf','c0','c1','c2','df',
                              'e0','e1','ec','ed','ee','ef','f0','f1','f3','f4','f5','ff'];
            seqs text[] := '{}';
            s text;
            decodes boolean;
            mismatches text[] := '{}';
        BEGIN
            FOR i IN 0..255 LOOP
                seqs := seqs || lpad(to_hex(i), 2, '0');
                FOR j IN 0..255 LOOP
                    seqs := seqs || (lpad(to_hex(i), 2, '0') || lpad(to_hex(j), 2, '0'));
                END LOOP;
            END LOOP;
            FOREACH s IN ARRAY ARRAY(SELECT x || y || z FROM unnest(b) x, unnest(b) y, unnest(b) z)
            LOOP
                seqs := seqs || s;
            END LOOP;
            FOREACH s IN ARRAY ARRAY(SELECT w || x || y || z
                                     FROM unnest(b) w, unnest(b) x, unnest(b) y, unnest(b) z
                                     WHERE w >= 'f0')
            LOOP
                seqs := seqs || s;
            END LOOP;
            FOREACH s IN ARRAY seqs LOOP
                BEGIN
                    PERFORM convert_from(decode(s, 'hex'), 'UTF8');
                    decodes := true;
                EXCEPTION WHEN OTHERS THEN
                    decodes := false;
                END;
                IF decodes <> (S.token_instance('sf2.' || repeat('0', 32) || '.1.' || s)
                               IS NOT NULL) THEN
                    mismatches := mismatches || s;
                END IF;
            END LOOP;
            IF cardinality(mismatches) > 0 THEN
                RAISE EXCEPTION 'token_instance disagrees with convert_from on %', mismatches;
            END IF;
        END $$",
    );
    let admin = common::admin_pool().await;
    sqlx::raw_sql(&check).execute(&admin).await.unwrap();
    admin.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_token_names_its_row_and_garbage_names_nothing() {
    let h = Harness::new("token_work_item", |_| {}).await;
    let nonce = "f".repeat(32);
    for (token, row) in [
        (format!("sfw.{nonce}.1"), Some("1")),
        (
            format!("sfw.{nonce}.123456789012345678"),
            Some("123456789012345678"),
        ),
        (format!("sfw.{nonce}.9999999999999999999"), None), // past bigint
        (format!("sfw.{nonce}."), None),
        (format!("sfw.{nonce}.-1"), None),
        (format!("sfw.{nonce}.1.2"), None),
        (format!("sf1.{nonce}."), None), // before schema version 5
        ("sfw.short.1".to_string(), None),
    ] {
        assert_eq!(
            decoded(&h, "token_work_item", Some(&token))
                .await
                .as_deref(),
            row,
            "{token}"
        );
    }
    h.drop().await;
}

/// Tokens that name no row (malformed, or naming another row than the one they lock), and
/// forged ones that name the right row with another nonce, are refused by every call that
/// takes one, without a database error, and leave the real lease as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_name_no_row_are_refused() {
    let h = Harness::new("token_refused", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("i"), None).await.unwrap();
    let (_, token, _) = h.fetch_only("i").await;
    p.enqueue_for_worker(activity_item("i", 1)).await.unwrap();
    let (_, work_token, _) = p
        .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
        .await
        .unwrap()
        .expect("a work item");
    let nonce = token.split('.').nth(1).unwrap();
    let not_utf8 = format!("sf2.{nonce}.1.ff");
    let other_instance = format!("sf2.{nonce}.1.6a"); // "j"
    let work_nonce = work_token.split('.').nth(1).unwrap();
    let other_row = format!("sfw.{work_nonce}.999999");
    let forged = token.replacen(nonce, &"0".repeat(32), 1);
    let forged_work = work_token.replacen(work_nonce, &"0".repeat(32), 1);
    for bad in [
        not_utf8.as_str(),
        other_instance.as_str(),
        forged.as_str(),
        "garbage",
    ] {
        let ack = p
            .ack_orchestration_item(bad, 1, vec![], vec![], vec![], running_metadata(), vec![])
            .await
            .expect_err(bad);
        assert!(!ack.is_retryable(), "{bad}: {ack:?}");
        let renew = p
            .renew_orchestration_item_lock(bad, Duration::from_secs(5))
            .await
            .expect_err(bad);
        assert!(!renew.is_retryable(), "{bad}: {renew:?}");
        let abandon = p
            .abandon_orchestration_item(bad, None, false)
            .await
            .expect_err(bad);
        assert!(!abandon.is_retryable(), "{bad}: {abandon:?}");
    }
    for bad in [
        other_row.as_str(),
        forged_work.as_str(),
        token.as_str(),
        "garbage",
    ] {
        let ack = p.ack_work_item(bad, None).await.expect_err(bad);
        assert!(!ack.is_retryable(), "{bad}: {ack:?}");
        let renew = p
            .renew_work_item_lock(bad, Duration::from_secs(5))
            .await
            .expect_err(bad);
        assert!(!renew.is_retryable(), "{bad}: {renew:?}");
    }
    // The real tokens still hold their leases.
    p.renew_orchestration_item_lock(&token, Duration::from_secs(5))
        .await
        .unwrap();
    p.ack_work_item(&work_token, None).await.unwrap();
    h.drop().await;
}

/// A build before schema version 5 still running during a rolling upgrade claims work
/// items with tokens that do not name their row; `ack_activity` still completes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_ack_accepts_a_token_of_a_build_before_row_tokens() {
    let h = Harness::new("token_old_worker", |_| {}).await;
    h.provider
        .enqueue_for_worker(activity_item("i", 1))
        .await
        .unwrap();
    let old = format!("sf1.{}.", "a".repeat(32));
    h.exec(
        "UPDATE S.worker_queue SET lock_token = $1, attempt_count = 1,
             locked_at = clock_timestamp(), locked_until = clock_timestamp() + interval '1 minute'",
        Some(&old),
    )
    .await;
    let admin = common::admin_pool().await;
    let acked: bool = sqlx::query_scalar(&h.sql("SELECT S.ack_activity($1, NULL, NULL)"))
        .persistent(false)
        .bind(&old)
        .fetch_one(&admin)
        .await
        .unwrap();
    let left: i64 = sqlx::query_scalar(&h.sql("SELECT count(*) FROM S.worker_queue"))
        .persistent(false)
        .fetch_one(&admin)
        .await
        .unwrap();
    admin.close().await;
    assert!(acked);
    assert_eq!(left, 0);
    h.drop().await;
}
