//! The provider's PostgreSQL schema name: validated once, then only ever used quoted.

use std::fmt;

/// Default schema for steadfast-pg's tables.
pub const DEFAULT_SCHEMA: &str = "steadfast";

/// Schema names PostgreSQL or the SQL standard own (besides every `pg_*` name).
pub const RESERVED_SCHEMAS: &[&str] = &["information_schema"];

/// A validated schema identifier.
///
/// Rule: 1 to 63 characters, ASCII letters, digits and `_`, not starting with a digit,
/// not starting with `pg_` and not one of [`RESERVED_SCHEMAS`] (both compared without
/// regard to case: PostgreSQL's own schemas). It is always emitted quoted, so case is
/// preserved exactly as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaName(String);

impl SchemaName {
    pub fn parse(name: &str) -> Result<Self, String> {
        let valid_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let starts_ok = name.chars().next().is_some_and(|c| !c.is_ascii_digit());
        if name.is_empty() || name.len() > 63 {
            return Err(format!(
                "schema must be 1 to 63 characters long (got {})",
                name.len()
            ));
        }
        if !valid_chars || !starts_ok {
            return Err(
                "schema may contain only ASCII letters, digits and '_' and must not start with a digit"
                    .to_string(),
            );
        }
        if name.to_ascii_lowercase().starts_with("pg_") {
            return Err("schema must not start with 'pg_' (reserved by PostgreSQL)".to_string());
        }
        if RESERVED_SCHEMAS
            .iter()
            .any(|r| r.eq_ignore_ascii_case(name))
        {
            return Err(format!(
                "schema must not be one of {} (reserved by PostgreSQL)",
                RESERVED_SCHEMAS.join(", ")
            ));
        }
        Ok(Self(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The identifier in double quotes, safe to splice into SQL text.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Render SQL text written against the `__SCHEMA__` placeholder.
pub(crate) fn render_sql(template: &str, schema: &SchemaName) -> String {
    template.replace("__SCHEMA__", &schema.quoted())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_identifiers() {
        for ok in ["steadfast", "_x", "A1_b", &"a".repeat(63)] {
            assert!(SchemaName::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_anything_that_could_escape_quoting() {
        for bad in [
            "",
            "1abc",
            "a\"b",
            "a;drop",
            "a b",
            "pg_temp",
            "PG_CATALOG",
            "information_schema",
            "Information_Schema",
            "a\0b",
            "a\nb",
            "a.b",
            "a-b",
            "é",
            &"a".repeat(64),
        ] {
            assert!(SchemaName::parse(bad).is_err(), "{bad:?}");
        }
    }
}
