//! The one seam where database errors become duroxide `ProviderError`s.

use duroxide::providers::ProviderError;

/// Errors from building a provider (bad options, unreachable database, migrations).
/// Messages never include the database URL or credentials.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("invalid provider options: {0}")]
    InvalidOptions(String),
    #[error("failed to connect to PostgreSQL: {0}")]
    Connect(String),
    #[error("migration failed: {0}")]
    Migration(String),
}

/// SQLSTATE codes that mean "try again", because they say something about the database
/// or the fleet, not about the instance: serialization failure, deadlock, lock not
/// available (our `lock_timeout` backstop), query canceled (our `statement_timeout`),
/// admin shutdown, crash shutdown, cannot connect now, a read-only transaction (a standby
/// promoted or a primary demoted mid-failover), and I/O errors. Whole classes: 08
/// (connection exceptions) and 53 (insufficient resources: disk full, out of memory, too
/// many connections, configuration limits). A permanent error from an ack makes the
/// duroxide runtime fail the instance, so nothing here may be permanent.
const RETRYABLE_SQLSTATES: &[&str] = &[
    "40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "25006", "58030",
];
const RETRYABLE_SQLSTATE_CLASSES: &[&str] = &["08", "53"];

pub(crate) fn is_retryable_sqlstate(code: &str) -> bool {
    RETRYABLE_SQLSTATES.contains(&code)
        || RETRYABLE_SQLSTATE_CLASSES
            .iter()
            .any(|class| code.starts_with(class))
}

pub(crate) fn is_retryable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db.code().is_some_and(|c| is_retryable_sqlstate(&c)),
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Tls(_) => true,
        _ => false,
    }
}

/// Map a database error for `operation`. Only the server's message and SQLSTATE are kept.
pub(crate) fn db_error(operation: &str, e: sqlx::Error) -> ProviderError {
    let message = match &e {
        sqlx::Error::Database(db) => match db.code() {
            Some(code) => format!("{} (SQLSTATE {code})", db.message()),
            None => db.message().to_string(),
        },
        other => redact(&other.to_string()),
    };
    if is_retryable(&e) {
        ProviderError::retryable(operation, message)
    } else {
        ProviderError::permanent(operation, message)
    }
}

pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
}

pub(crate) fn codec_error(operation: &str, what: &str, e: impl std::fmt::Display) -> ProviderError {
    ProviderError::permanent(operation, format!("{what}: {e}"))
}

/// Remove anything that looks like a connection URL from a message. A bare scheme
/// (`postgres://` in a rule's text) names no server and is kept.
pub(crate) fn redact(message: &str) -> String {
    let is_url = |word: &str| {
        ["postgres://", "postgresql://"].iter().any(|scheme| {
            word.split(scheme).skip(1).any(|rest| {
                !rest
                    .trim_end_matches(|c: char| c.is_ascii_punctuation())
                    .is_empty()
            })
        })
    };
    message
        .split_whitespace()
        .map(|word| if is_url(word) { "<redacted-url>" } else { word })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn infrastructure_faults_are_retryable_and_data_errors_are_not() {
        for code in [
            "53100", "53200", "53300", "53400", "25006", "08006", "08P01", "57P01", "57014",
            "40001", "40P01", "55P03", "58030",
        ] {
            assert!(super::is_retryable_sqlstate(code), "{code}");
        }
        for code in ["23505", "22P02", "42P01", "42883", "XX000", "P0001"] {
            assert!(!super::is_retryable_sqlstate(code), "{code}");
        }
    }

    #[test]
    fn redact_removes_urls() {
        let m = super::redact("error connecting to postgres://user:pw@host/db: refused");
        assert!(!m.contains("pw"), "{m}");
        let m = super::redact("(postgres://u:pw@h) or x,postgresql://h/db");
        assert_eq!(m, "<redacted-url> or <redacted-url>");
        let rule = "must start with postgres:// or postgresql:// (value not shown)";
        assert_eq!(super::redact(rule), rule);
    }
}
