//! Versioned, embedded migrations, then server-side functions. Migrations change schema
//! only; each runs once, in order, and an applied migration whose text changed is an
//! error, never silently re-run. Functions live one per file in `functions/`; every text a
//! file has had is a numbered revision in `functions/revisions.txt` (append-only). They are
//! installed, in the order of [`FUNCTIONS`], where `schema_functions` records an older
//! revision than this build's, or this revision with other text; a newer revision, which
//! a newer build installed, is left in place. That is the rolling-upgrade rule's other
//! half: a function's new revision must still serve the previous release's callers
//! (same name, arguments it accepted still accepted, result columns it read still there,
//! same meaning); a change that cannot is a new function under a new name. Everything
//! runs inside one transaction that holds a per-schema advisory lock, so any number of
//! processes may start at once. No statement here is prepared by name, so this also runs
//! through a transaction-mode pooler.

use sqlx::{Executor, PgPool, Row};

use crate::error::{SetupError, redact};
use crate::schema::{SchemaName, render_sql};

struct Migration {
    version: i32,
    name: &'static str,
    sql: &'static str,
}

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "baseline",
        sql: include_str!("../migrations/0001_baseline.sql"),
    },
    Migration {
        version: 2,
        name: "wake_without_triggers",
        sql: include_str!("../migrations/0002_wake_without_triggers.sql"),
    },
    Migration {
        version: 3,
        name: "instances_by_creation",
        sql: include_str!("../migrations/0003_instances_by_creation.sql"),
    },
    Migration {
        version: 4,
        name: "function_revisions",
        sql: include_str!("../migrations/0004_function_revisions.sql"),
    },
    Migration {
        version: 5,
        name: "hot_claims",
        sql: include_str!("../migrations/0005_hot_claims.sql"),
    },
    Migration {
        version: 6,
        name: "lease_pins",
        sql: include_str!("../migrations/0006_lease_pins.sql"),
    },
    Migration {
        version: 7,
        name: "hot_message_tags",
        sql: include_str!("../migrations/0007_hot_message_tags.sql"),
    },
];

/// The schema version this build needs.
pub const SCHEMA_VERSION: i32 = 7;

/// Every revision of every function file, one `name revision checksum` line each, oldest
/// first; lines are only ever added (see [`revision_of`]).
const REVISIONS: &str = include_str!("../functions/revisions.txt");

/// The `(name, revision, checksum)` lines of [`REVISIONS`].
fn revision_lines() -> impl Iterator<Item = (&'static str, i32, &'static str)> {
    REVISIONS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?, f.next()?.parse().ok()?, f.next()?))
        })
}

/// This build's revision of function `name`, whose text has checksum `sum`.
fn revision_of(name: &str, sum: &str) -> Result<i32, SetupError> {
    revision_lines()
        .find(|(n, _, c)| *n == name && *c == sum)
        .map(|(_, r, _)| r)
        .ok_or_else(|| {
            SetupError::Migration(format!(
                "functions/{name}.sql (checksum {sum}) has no line in functions/revisions.txt; \
                 this build is broken"
            ))
        })
}

/// The checksum that pre-release builds recorded for their migration 1 (`0001_initial`,
/// before migrations 0001-0009 were folded into the baseline): such a schema cannot be
/// upgraded, only made again.
const PRE_RELEASE_INITIAL: &str = "68cd075f4e46bb4f";

/// Server-side functions, each `functions/<name>.sql`, in the order they are installed
/// (an SQL-language function's body is checked against those installed before it). A file
/// may also hold the triggers that call its function.
const FUNCTIONS: &[(&str, &str)] = &[
    ("try_jsonb", include_str!("../functions/try_jsonb.sql")),
    (
        "redelivery_at",
        include_str!("../functions/redelivery_at.sql"),
    ),
    (
        "version_in_range",
        include_str!("../functions/version_in_range.sql"),
    ),
    ("current_pin", include_str!("../functions/current_pin.sql")),
    (
        "execution_pin_in_range",
        include_str!("../functions/execution_pin_in_range.sql"),
    ),
    (
        "lease_pin_in_range",
        include_str!("../functions/lease_pin_in_range.sql"),
    ),
    (
        "token_instance",
        include_str!("../functions/token_instance.sql"),
    ),
    (
        "tagged_by_claim",
        include_str!("../functions/tagged_by_claim.sql"),
    ),
    (
        "token_work_item",
        include_str!("../functions/token_work_item.sql"),
    ),
    (
        "moved_ready_at",
        include_str!("../functions/moved_ready_at.sql"),
    ),
    ("stamp_lease", include_str!("../functions/stamp_lease.sql")),
    (
        "starts_instance",
        include_str!("../functions/starts_instance.sql"),
    ),
    (
        "first_queued_start",
        include_str!("../functions/first_queued_start.sql"),
    ),
    (
        "instance_runnable_from",
        include_str!("../functions/instance_runnable_from.sql"),
    ),
    (
        "ready_at_fence_key",
        include_str!("../functions/ready_at_fence_key.sql"),
    ),
    (
        "settle_ready_at",
        include_str!("../functions/settle_ready_at.sql"),
    ),
    (
        "release_lease",
        include_str!("../functions/release_lease.sql"),
    ),
    (
        "restamp_lease",
        include_str!("../functions/restamp_lease.sql"),
    ),
    (
        "give_back_claim",
        include_str!("../functions/give_back_claim.sql"),
    ),
    (
        "enqueue_orchestrator",
        include_str!("../functions/enqueue_orchestrator.sql"),
    ),
    (
        "enqueue_work_items",
        include_str!("../functions/enqueue_work_items.sql"),
    ),
    (
        "enqueue_worker",
        include_str!("../functions/enqueue_worker.sql"),
    ),
    (
        "append_history",
        include_str!("../functions/append_history.sql"),
    ),
    (
        "touch_session",
        include_str!("../functions/touch_session.sql"),
    ),
    ("write_turn", include_str!("../functions/write_turn.sql")),
    (
        "dead_letter_handed_out",
        include_str!("../functions/dead_letter_handed_out.sql"),
    ),
    (
        "fail_stopped_instance",
        include_str!("../functions/fail_stopped_instance.sql"),
    ),
    (
        "claim_orchestration",
        include_str!("../functions/claim_orchestration.sql"),
    ),
    (
        "ack_turn_handing_off",
        include_str!("../functions/ack_turn_handing_off.sql"),
    ),
    ("ack_turn", include_str!("../functions/ack_turn.sql")),
    (
        "ack_activity",
        include_str!("../functions/ack_activity.sql"),
    ),
    (
        "claim_work_item",
        include_str!("../functions/claim_work_item.sql"),
    ),
    (
        "sweep_orphans",
        include_str!("../functions/sweep_orphans.sql"),
    ),
    (
        "start_instance_exclusive",
        include_str!("../functions/start_instance_exclusive.sql"),
    ),
];

crate::queries::named_queries!(struct MigrateQueries {
    migrate_no_timeout,
    migrate_lock,
    migrate_bootstrap,
    migrate_applied,
    migrate_record,
    migrate_functions_applied,
    migrate_function_record,
});

fn checksum(text: &str) -> String {
    // FNV-1a 64: detects edits to applied migrations; not a security measure.
    let hash = text.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    });
    format!("{hash:016x}")
}

fn fail(e: impl std::fmt::Display) -> SetupError {
    SetupError::Migration(redact(&e.to_string()))
}

pub(crate) async fn run(pool: &PgPool, schema: &SchemaName, apply: bool) -> Result<(), SetupError> {
    let q = MigrateQueries::render(schema);
    let mut tx = pool.begin().await.map_err(fail)?;
    sqlx::query(&q.migrate_no_timeout)
        .persistent(false)
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
    sqlx::query(&q.migrate_lock)
        .persistent(false)
        .bind(schema.as_str())
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
    if apply {
        // Plain &str, no arguments: sent with the simple-query protocol, which runs
        // multi-statement scripts.
        (&mut *tx)
            .execute(q.migrate_bootstrap.as_str())
            .await
            .map_err(fail)?;
    }
    let applied: Vec<(i32, String)> = match sqlx::query(&q.migrate_applied)
        .persistent(false)
        .fetch_all(&mut *tx)
        .await
    {
        Ok(rows) => rows
            .iter()
            .map(|r| (r.get::<i32, _>(0), r.get::<String, _>(1)))
            .collect(),
        Err(_) if !apply => Vec::new(),
        Err(e) => return Err(fail(e)),
    };
    if applied
        .iter()
        .any(|(v, sum)| *v == 1 && sum == PRE_RELEASE_INITIAL)
    {
        return Err(SetupError::Migration(format!(
            "schema {schema} was made by a pre-release build of steadfast-pg, whose migrations \
             were folded into one baseline before the first release; it cannot be upgraded: \
             drop schema {schema} with everything in it and let this build create it again"
        )));
    }
    for m in MIGRATIONS {
        let sql = render_sql(m.sql, schema);
        let sum = checksum(m.sql);
        match applied.iter().find(|(v, _)| *v == m.version) {
            Some((_, existing)) if *existing == sum => continue,
            Some(_) => {
                return Err(SetupError::Migration(format!(
                    "migration {:04}_{} was changed after it was applied to schema {schema}",
                    m.version, m.name
                )));
            }
            None if !apply => {
                return Err(SetupError::Migration(format!(
                    "schema {schema} is missing migration {:04}_{} and run_migrations is false",
                    m.version, m.name
                )));
            }
            None => {}
        }
        (&mut *tx)
            .execute(sql.as_str())
            .await
            .map_err(|e| fail(format!("{:04}_{}: {e}", m.version, m.name)))?;
        sqlx::query(&q.migrate_record)
            .persistent(false)
            .bind(m.version)
            .bind(m.name)
            .bind(&sum)
            .execute(&mut *tx)
            .await
            .map_err(fail)?;
        tracing::info!(target: "steadfast_pg", schema = %schema, version = m.version, name = m.name, "applied migration");
    }
    if let Some((v, _)) = applied.iter().find(|(v, _)| *v > SCHEMA_VERSION) {
        return Err(SetupError::Migration(format!(
            "schema {schema} is at version {v}, newer than this build supports ({SCHEMA_VERSION})"
        )));
    }
    install_functions(&mut tx, &q, schema, apply).await?;
    tx.commit().await.map_err(fail)?;
    Ok(())
}

async fn install_functions(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    q: &MigrateQueries,
    schema: &SchemaName,
    apply: bool,
) -> Result<(), SetupError> {
    let installed: Vec<(String, String, i32)> = sqlx::query(&q.migrate_functions_applied)
        .persistent(false)
        .fetch_all(&mut **tx)
        .await
        .map_err(fail)?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    for (name, text) in FUNCTIONS {
        let sum = checksum(text);
        let revision = revision_of(name, &sum)?;
        match installed.iter().find(|(n, _, _)| n == name) {
            Some((_, c, _)) if *c == sum => continue,
            Some((_, _, newer)) if *newer > revision => {
                tracing::info!(target: "steadfast_pg", schema = %schema, function = *name, installed = newer, this_build = revision, "kept a newer revision of a function");
                continue;
            }
            _ => {}
        }
        if !apply {
            return Err(SetupError::Migration(format!(
                "schema {schema} does not have this build's version of function {name} and run_migrations is false"
            )));
        }
        (&mut **tx)
            .execute(render_sql(text, schema).as_str())
            .await
            .map_err(|e| fail(format!("functions/{name}.sql: {e}")))?;
        sqlx::query(&q.migrate_function_record)
            .persistent(false)
            .bind(*name)
            .bind(&sum)
            .bind(revision)
            .execute(&mut **tx)
            .await
            .map_err(fail)?;
        tracing::info!(target: "steadfast_pg", schema = %schema, function = *name, "installed function");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set to append a new revision line for every function file whose text has none.
    const WRITE: &str = "STEADFAST_WRITE_FUNCTION_REVISIONS";

    /// Each function file's text is the newest revision of its name in
    /// functions/revisions.txt: a changed file needs a new line (the writer adds it).
    #[test]
    fn every_function_file_is_its_latest_revision() {
        let mut appended = String::new();
        let mut stale = Vec::new();
        for (name, text) in FUNCTIONS {
            let sum = checksum(text);
            let latest = revision_lines()
                .filter(|(n, _, _)| n == name)
                .map(|(_, r, _)| r)
                .max();
            match revision_of(name, &sum) {
                Ok(r) if Some(r) == latest => {}
                _ => {
                    let next = latest.unwrap_or(0) + 1;
                    appended.push_str(&format!("{name} {next} {sum}\n"));
                    stale.push(format!("{name} (next revision {next})"));
                }
            }
        }
        if !stale.is_empty() && std::env::var_os(WRITE).is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/functions/revisions.txt");
            let mut all = std::fs::read_to_string(path).unwrap();
            all.push_str(&appended);
            std::fs::write(path, all).unwrap();
            return;
        }
        assert!(
            stale.is_empty(),
            "function files changed without a new revision: {}; append them with \
             {WRITE}=1 cargo test -p steadfast-pg --lib migrate, and keep the rolling-upgrade \
             rule (src/migrate.rs)",
            stale.join(", ")
        );
    }

    #[test]
    fn revisions_are_numbered_once_per_function_and_name_only_existing_files() {
        let lines: Vec<_> = revision_lines().collect();
        for (i, (name, revision, _)) in lines.iter().enumerate() {
            assert!(
                FUNCTIONS.iter().any(|(n, _)| n == name),
                "revisions.txt names {name}, which no function file is"
            );
            assert!(
                !lines[..i]
                    .iter()
                    .any(|(n, r, _)| n == name && r >= revision),
                "revision {revision} of {name} is not above every earlier line of it"
            );
        }
    }
}
