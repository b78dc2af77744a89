//! The `database_url` option: checked before anything connects, and never echoed.
//!
//! Rules (each error names `database_url` and the rule, never the value):
//! 1. at most [`MAX_DATABASE_URL_BYTES`] bytes;
//! 2. no control characters (C0 including NUL, tab and newlines, DEL, C1);
//! 3. scheme `postgres://` or `postgresql://`;
//! 4. a well-formed URL;
//! 5. query parameters only from [`KNOWN_QUERY_PARAMETERS`] (or `options[<setting>]`), so a
//!    typo is an error instead of being ignored (sqlx would log the ignored value,
//!    which could be a secret);
//! 6. `sslmode`, when given, one of PostgreSQL's modes.
//!
//! [`Scrubber`] removes the URL and its password from any message before it leaves the
//! crate (setup errors and the listener's log records).

use percent_encoding::percent_decode_str;
use url::Url;

/// Longest accepted URL, in bytes.
pub const MAX_DATABASE_URL_BYTES: usize = 4096;

/// Query parameters sqlx understands for PostgreSQL.
pub const KNOWN_QUERY_PARAMETERS: &[&str] = &[
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "statement-cache-capacity",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
];

const SSL_MODES: &[&str] = &[
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

const SCHEMES: &[&str] = &["postgres://", "postgresql://"];

/// Check `url` against the rules above. The error names the rule, never the URL.
pub fn validate(url: &str) -> Result<(), String> {
    if url.is_empty() || url.len() > MAX_DATABASE_URL_BYTES {
        return Err(format!(
            "database_url must be 1 to {MAX_DATABASE_URL_BYTES} bytes long (got {} bytes; value not shown)",
            url.len()
        ));
    }
    if let Some(at) = url.char_indices().find(|(_, c)| c.is_control()) {
        return Err(format!(
            "database_url must not contain control characters (found one at byte {}; value not shown)",
            at.0
        ));
    }
    if !SCHEMES.iter().any(|s| url.starts_with(s)) {
        return Err(
            "database_url must start with postgres:// or postgresql:// (value not shown)".into(),
        );
    }
    // url::ParseError's messages describe the defect ("invalid port number"), not the input.
    let parsed = Url::parse(url)
        .map_err(|e| format!("database_url is not a valid URL: {e} (value not shown)"))?;
    for (key, value) in parsed.query_pairs() {
        if !is_known_parameter(&key) {
            return Err(format!(
                "database_url has an unknown query parameter {} (known: {}, options[<setting>])",
                printable_key(&key),
                KNOWN_QUERY_PARAMETERS.join(", ")
            ));
        }
        if matches!(&*key, "sslmode" | "ssl-mode") && !SSL_MODES.contains(&&*value) {
            return Err(format!(
                "database_url parameter {key} must be one of {} (value not shown)",
                SSL_MODES.join(", ")
            ));
        }
    }
    Ok(())
}

fn is_known_parameter(key: &str) -> bool {
    KNOWN_QUERY_PARAMETERS.contains(&key)
        || key
            .strip_prefix("options[")
            .and_then(|k| k.strip_suffix(']'))
            .is_some_and(|k| !k.is_empty())
}

/// A parameter name is echoed only when it plainly is a name (it could be a pasted secret).
fn printable_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= 40
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '[' | ']' | '.'));
    if plain {
        format!("\"{key}\"")
    } else {
        "(name not shown)".into()
    }
}

/// Replaces every secret of one database URL (the URL itself, its user-info, its password
/// as written and percent-decoded, a `password` query parameter) with `***`, then redacts
/// anything else that looks like a connection URL.
#[derive(Clone)]
pub(crate) struct Scrubber {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scrubber({} secrets)", self.secrets.len())
    }
}

impl Scrubber {
    pub(crate) fn new(url: &str) -> Self {
        let mut secrets = vec![url.to_string()];
        if let Ok(parsed) = Url::parse(url) {
            if let Some(password) = parsed.password() {
                secrets.push(password.to_string());
                if let Ok(decoded) = percent_decode_str(password).decode_utf8() {
                    secrets.push(decoded.into_owned());
                }
            }
            for (key, value) in parsed.query_pairs() {
                if key == "password" {
                    secrets.push(value.into_owned());
                }
            }
        }
        secrets.retain(|s| !s.is_empty());
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Self { secrets }
    }

    pub(crate) fn scrub(&self, message: &str) -> String {
        let mut out = message.to_string();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), "***");
        }
        crate::error::redact(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_urls() {
        for ok in [
            "postgres://u@h/db",
            "postgresql://u:p%40ss@h:5433/db?sslmode=require&application_name=x",
            "postgres:///db?host=/var/run/postgresql",
            "postgres://u@h/db?options=-c%20search_path%3Dx&options[lock_timeout]=1s",
        ] {
            validate(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
    }

    #[test]
    fn each_rule_has_its_own_error_without_the_value() {
        let cases: &[(String, &str)] = &[
            (String::new(), "1 to 4096 bytes"),
            (
                format!("postgres://u:secret@h/{}", "d".repeat(5000)),
                "1 to 4096 bytes",
            ),
            ("postgres://u:secret@h/db\0".into(), "control characters"),
            ("postgres://u:secret@h/d\nb".into(), "control characters"),
            (
                "postgres://u:secret@h/d\u{85}b".into(),
                "control characters",
            ),
            (
                "mysql://u:secret@h/db".into(),
                "must start with postgres://",
            ),
            ("postgres://u:secret@h:99999/db".into(), "not a valid URL"),
            (
                "postgres://u:secret@h/db?sslmdoe=require".into(),
                "unknown query parameter \"sslmdoe\"",
            ),
            (
                "postgres://u:secret@h/db?sslmode=secret".into(),
                "sslmode must be one of",
            ),
            (
                "postgres://u@h/db?secret%20value=1".into(),
                "(name not shown)",
            ),
        ];
        for (url, rule) in cases {
            let e = validate(url).unwrap_err();
            assert!(e.starts_with("database_url"), "{e}");
            assert!(e.contains(rule), "{url:?}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }

    #[test]
    fn scrubber_removes_password_in_every_form() {
        let s = Scrubber::new("postgres://bob:p%40ss%20w0rd@h/db?password=other-secret");
        let m = s.scrub(
            "a p@ss w0rd b p%40ss%20w0rd c other-secret d postgres://bob:p%40ss%20w0rd@h/db?password=other-secret e postgresql://x:y@z",
        );
        for leaked in ["p@ss w0rd", "p%40ss", "other-secret", "postgresql://"] {
            assert!(!m.contains(leaked), "{m}");
        }
        assert!(m.starts_with("a *** b *** c *** d *** e"), "{m}");
    }
}
