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

/// SQLSTATE codes that mean "try again": serialization failure, deadlock, lock not
/// available (our `lock_timeout` backstop), query canceled, admin shutdown, cannot connect
/// now, too many connections.
const RETRYABLE_SQLSTATES: &[&str] = &[
    "40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "53300", "08000", "08003",
    "08006", "08001", "08004",
];

pub(crate) fn is_retryable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| RETRYABLE_SQLSTATES.contains(&c.as_ref())),
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
    fn redact_removes_urls() {
        let m = super::redact("error connecting to postgres://user:pw@host/db: refused");
        assert!(!m.contains("pw"), "{m}");
        let m = super::redact("(postgres://u:pw@h) or x,postgresql://h/db");
        assert_eq!(m, "<redacted-url> or <redacted-url>");
        let rule = "must start with postgres:// or postgresql:// (value not shown)";
        assert_eq!(super::redact(rule), rule);
    }
}
