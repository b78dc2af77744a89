//! Paged, filtered listing of instances, newest first, by keyset: a page ends with a
//! cursor naming its last row (creation time to the microsecond, instance id), and the
//! next page starts strictly after it. Instances created meanwhile are newer than every
//! cursor, so they never shift a page that follows one: a walk through the pages sees
//! each instance that existed when it started exactly once.

use duroxide::providers::{InstanceInfo, ProviderError};
use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::admin::instance_info;
use crate::error::db_error;
use crate::provider::PostgresProvider;
use crate::run::RunQuery;

const OP: &str = "list_instance_page";

/// The most instances one page holds.
pub const MAX_INSTANCE_PAGE: u32 = 1000;

/// The latest time a time filter may name: JavaScript's last `Date` (ms since the epoch).
pub const MAX_FILTER_TIME_MS: i64 = 8_640_000_000_000_000;

/// What [`PostgresProvider::list_instance_page`] lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstanceQuery {
    /// Only instances whose current execution has one of these statuses (`Running`,
    /// `Completed`, `Failed`, `ContinuedAsNew`). None: any.
    pub statuses: Option<Vec<String>>,
    /// Only instances of this orchestration.
    pub orchestration_name: Option<String>,
    /// Only sub-orchestrations of this instance.
    pub parent_instance_id: Option<String>,
    /// Only instances created at or after this time (ms since the epoch).
    pub created_from_ms: Option<i64>,
    /// Only instances created before this time (ms since the epoch).
    pub created_before_ms: Option<i64>,
    /// Page size, 1 to [`MAX_INSTANCE_PAGE`].
    pub limit: u32,
    /// Where the previous page ended ([`InstancePage::next_cursor`]); None for the first.
    pub cursor: Option<String>,
}

/// One page of instances, newest first.
#[derive(Clone, Debug)]
pub struct InstancePage {
    pub instances: Vec<InstanceInfo>,
    /// Pass it as [`InstanceQuery::cursor`] for the next page; None after the last one.
    pub next_cursor: Option<String>,
}

/// Where a page ended: its last row's creation time (ISO 8601 UTC with microseconds, so
/// that cursors order as their rows do) and instance id. On the wire it is one opaque
/// hex token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceCursor {
    pub created_at: String,
    pub instance_id: String,
}

impl InstanceCursor {
    /// The cursor of a row created `ms` after the epoch (for listings made outside the
    /// database, e.g. over another provider).
    pub fn at_millis(ms: i64, instance_id: &str) -> Self {
        Self {
            created_at: iso_utc_micros(ms),
            instance_id: instance_id.to_string(),
        }
    }

    pub fn encode(&self) -> String {
        format!("{}|{}", self.created_at, self.instance_id)
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A token `encode` made, or an error naming the rule.
    pub fn decode(token: &str) -> Result<Self, String> {
        let bad =
            || "cursor must be a cursor returned by a previous page of this listing".to_string();
        if !token.len().is_multiple_of(2) {
            return Err(bad());
        }
        let bytes = (0..token.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(bad)?;
        let text = String::from_utf8(bytes).map_err(|_| bad())?;
        let (at, instance) = text.split_once('|').ok_or_else(bad)?;
        let well_formed = at.len() == 27
            && at.ends_with('Z')
            && at
                .bytes()
                .all(|b| b.is_ascii_digit() || b"-:.TZ".contains(&b));
        if !well_formed {
            return Err(bad());
        }
        Ok(Self {
            created_at: at.to_string(),
            instance_id: instance.to_string(),
        })
    }
}

/// `ms` since the epoch (0 to [`MAX_FILTER_TIME_MS`]) as `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`.
fn iso_utc_micros(ms: i64) -> String {
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}000Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

impl InstanceQuery {
    /// Whether this query keeps the rules (limit, time range, cursor); the error names the
    /// field and the rule.
    pub fn check(&self) -> Result<Option<InstanceCursor>, String> {
        if self.limit == 0 || self.limit > MAX_INSTANCE_PAGE {
            return Err(format!(
                "limit must be between 1 and {MAX_INSTANCE_PAGE} (got {})",
                self.limit
            ));
        }
        for (name, ms) in [
            ("created_from_ms", self.created_from_ms),
            ("created_before_ms", self.created_before_ms),
        ] {
            if let Some(ms) = ms
                && !(0..=MAX_FILTER_TIME_MS).contains(&ms)
            {
                return Err(format!(
                    "{name} must be between 0 and {MAX_FILTER_TIME_MS} (got {ms})"
                ));
            }
        }
        self.cursor
            .as_deref()
            .map(InstanceCursor::decode)
            .transpose()
    }
}

impl PostgresProvider {
    /// The rows of `admin_instances_page` for `query` after `cursor`, at most `limit`,
    /// only `instance`'s when given.
    async fn instance_rows(
        &self,
        query: &InstanceQuery,
        cursor: Option<InstanceCursor>,
        instance: Option<&str>,
        limit: u32,
        op: &str,
    ) -> Result<Vec<PgRow>, ProviderError> {
        let (at, after) = match cursor {
            Some(c) => (c.created_at, c.instance_id),
            None => ("infinity".to_string(), String::new()),
        };
        self.query(&self.admin_q.admin_instances_page)
            .bind(at)
            .bind(after)
            .bind(query.statuses.clone())
            .bind(query.orchestration_name.clone())
            .bind(query.parent_instance_id.clone())
            .bind(query.created_from_ms)
            .bind(query.created_before_ms)
            .bind(i64::from(limit))
            .bind(instance)
            .fetch_all_on(self, op)
            .await
    }

    /// One instance's row (as `admin::instance_info` reads it), if it exists.
    pub(crate) async fn instance_row(
        &self,
        instance: &str,
        op: &str,
    ) -> Result<Option<PgRow>, ProviderError> {
        let everything = InstanceQuery {
            limit: 1,
            ..InstanceQuery::default()
        };
        let rows = self
            .instance_rows(&everything, None, Some(instance), 1, op)
            .await?;
        Ok(rows.into_iter().next())
    }

    /// One page of instances matching `query`, newest first (see the module docs).
    pub async fn list_instance_page(
        &self,
        query: &InstanceQuery,
    ) -> Result<InstancePage, ProviderError> {
        let cursor = query
            .check()
            .map_err(|rule| ProviderError::permanent(OP, rule))?;
        let rows = self
            .instance_rows(query, cursor, None, query.limit + 1, OP)
            .await?;
        let more = rows.len() > query.limit as usize;
        let rows = &rows[..rows.len().min(query.limit as usize)];
        let next_cursor = match (more, rows.last()) {
            (true, Some(last)) => Some(
                InstanceCursor {
                    created_at: last.try_get("cursor_at").map_err(|e| db_error(OP, e))?,
                    instance_id: last.try_get("instance_id").map_err(|e| db_error(OP, e))?,
                }
                .encode(),
            ),
            _ => None,
        };
        let instances = rows
            .iter()
            .map(|r| instance_info(r, OP))
            .collect::<Result<_, _>>()?;
        Ok(InstancePage {
            instances,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_anything_else() {
        let c = InstanceCursor {
            created_at: "2026-12-03T05:05:34.123456Z".into(),
            instance_id: "order|42".into(),
        };
        assert_eq!(InstanceCursor::decode(&c.encode()).unwrap(), c);
        let odd = c.encode()[1..].to_string();
        let not_a_time = InstanceCursor {
            created_at: "yesterday".into(),
            ..c.clone()
        }
        .encode();
        for bad in ["", "zz", "abc", &odd, &not_a_time] {
            assert!(InstanceCursor::decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn millisecond_times_format_as_the_database_does() {
        assert_eq!(iso_utc_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            iso_utc_micros(951_782_400_123),
            "2000-02-29T00:00:00.123000Z"
        );
        assert_eq!(
            iso_utc_micros(1_796_274_334_999),
            "2026-12-03T05:05:34.999000Z"
        );
        assert_eq!(
            iso_utc_micros(MAX_FILTER_TIME_MS),
            "275760-09-13T00:00:00.000000Z"
        );
    }
}
