//! Provider configuration. Every field is documented with its default and its rule;
//! [`ProviderOptions::validate`] names the field and the rule on bad input.

use std::time::Duration;

use crate::schema::DEFAULT_SCHEMA;

/// How `fetch_*` waits when nothing is ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollingMode {
    /// Long polling: wait up to the caller's `poll_timeout`, woken after every enqueue
    /// (directly in the enqueuing process, by a coalesced `NOTIFY` in the others) and
    /// re-checking at least every [`ClaimOptions::long_poll_recheck`].
    /// Uses two dedicated session connections per provider: one for `LISTEN`, one that
    /// sends the wake-ups (`synchronous_commit` off).
    Listen,
    /// Without any session state: no `LISTEN`, no session-level settings or locks, no
    /// server-side prepared statements. Use behind a transaction-mode pooler such as
    /// PgBouncer. A fetch still waits up to `poll_timeout`, woken at once by the enqueues
    /// of this process's providers (see [`ProviderOptions::share_wakes_in_process`]) and
    /// handed the activities its turns schedule, as in `Listen`, but nothing tells it of
    /// other processes' work: it finds that when it
    /// re-checks, every [`ClaimOptions::long_poll_recheck`], so that setting bounds how
    /// long work from another process waits for an idle dispatcher.
    SessionFree,
}

/// Exponential backoff applied by the claim itself to a message whose lease ran out
/// without an ack or abandon: it is eligible again only at
/// `lease_end + min(cap, base * 2^(attempt_count - 1)) * (1 + jitter * u)`, `u` uniform
/// in `[0, 1)` drawn once per claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedeliveryBackoff {
    /// Default 20 ms. Must be at most `cap`.
    pub base: Duration,
    /// Default 30 s. At most 1 hour.
    pub cap: Duration,
    /// Default 0.2. In `[0, 1]`.
    pub jitter: f64,
}

impl Default for RedeliveryBackoff {
    fn default() -> Self {
        Self {
            base: Duration::from_millis(20),
            cap: Duration::from_secs(30),
            jitter: 0.2,
        }
    }
}

impl RedeliveryBackoff {
    /// The delay before redelivery after the lease of attempt `attempt_count` ran out,
    /// for a jitter draw `u` in `[0, 1)`. Mirrors the SQL in the candidate queries.
    pub fn delay(&self, attempt_count: u32, u: f64) -> Duration {
        let exponent = attempt_count.saturating_sub(1).min(62) as i32;
        let raw = self.base.as_secs_f64() * 2f64.powi(exponent);
        let capped = raw.min(self.cap.as_secs_f64());
        Duration::from_secs_f64(capped * (1.0 + self.jitter * u))
    }
}

/// The default attempt ceiling: duroxide's default `RuntimeOptions::max_attempts`.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// Bounds and choices of the claim in `fetch_orchestration_item` and `fetch_work_item`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClaimOptions {
    /// Candidates are drawn at random from the oldest `fanout` eligible instances (or work
    /// items), so concurrent dispatchers do not all chase the same row. 1 = strict FIFO.
    /// Default 8. Range 1..=1024.
    pub fanout: u32,
    /// At most this many candidate tries that lose a race (the row was taken meanwhile) or
    /// stop an instance (ceiling, history limit) in one fetch call; a try that finds
    /// nothing to hand out is not counted. Default 8. Range 1..=1024.
    pub max_claim_attempts: u32,
    /// Bound on the time one fetch call spends trying candidates (long-poll waiting not
    /// included). Default 2 s. Range 1 ms..=60 s.
    pub max_claim_duration: Duration,
    /// Attempt ceiling enforced inside the claim statement: a message that has already
    /// been handed out `max_attempts + 1` times is never handed out again; the same
    /// statement fails its instance (or activity) as poison and moves it to the dead-letter
    /// table. Set it to the runtime's `max_attempts`. Default `Some(10)`, duroxide's
    /// default; `None` disables the ceiling. Range 1..=1_000_000.
    pub max_attempts: Option<u32>,
    /// See [`RedeliveryBackoff`].
    pub redelivery_backoff: RedeliveryBackoff,
    /// The longest a waiting fetch sleeps between checks when no wake-up arrives (covers
    /// delayed visibility and expiring leases, and in [`PollingMode::SessionFree`] every
    /// other process's work; there `wait_for_orchestration` also reads the status this
    /// often, for an end committed by another process). Default 250 ms. Range 10 ms..=60 s.
    pub long_poll_recheck: Duration,
    /// How long an orchestrator message to an instance that nothing has started (a
    /// mistyped id, an event raised before its start, a completion for a deleted
    /// instance) waits, from when it became visible, for a start of that instance. Such
    /// messages are never claim candidates; past this they are moved to the dead-letter
    /// table with reason `orphaned` and a `MessagesOrphaned` diagnostic. Default 5 min.
    /// Range 1 ms..=30 days.
    pub orphan_timeout: Duration,
    /// The longest one orchestration turn may hold its instance: renewals never extend the
    /// lease past this much after the claim, so a turn that never ends (orchestration code
    /// that loops or blocks its thread or event loop, while the runtime's renewal task
    /// keeps running) loses its lease, and the instance is redelivered with the attempt
    /// counted, up to the attempt ceiling. Default 5 min; `None` = no deadline. Range
    /// 100 ms..=24 h.
    pub max_turn_duration: Option<Duration>,
    /// The same for one activity execution's work-item lease. Default 1 h; `None` = no
    /// deadline (an activity that never settles then holds its item for ever). Range
    /// 100 ms..=7 days.
    pub max_activity_duration: Option<Duration>,
    /// The most orchestrator messages one claim hands out (its oldest visible ones; the
    /// rest stay queued for the instance's next turn), so that no backlog makes one claim
    /// unbounded. Default `Some(1000)`; `None` = all. Range 1..=1_000_000.
    pub max_batch_messages: Option<u32>,
    /// The most history events of one execution a claim loads. An instance over it is
    /// not handed out: the claim fails its execution (non-retryable, naming this option)
    /// and dead-letters its messages with reason `history_too_large`, once, instead of
    /// failing to load it on every claim. Default `Some(50_000)` (Temporal's hard limit is
    /// 51,200); `None` = no limit. Range 1..=100_000_000.
    pub max_history_events: Option<u32>,
    /// The same for the history's stored size in bytes (as PostgreSQL stores it, so
    /// possibly compressed; nothing past the limit is read). Default `Some(50 MiB)`
    /// (Temporal's is 50 MB); `None` = no limit. Range 1 KiB..=1 GiB.
    pub max_history_bytes: Option<u64>,
}

impl Default for ClaimOptions {
    fn default() -> Self {
        Self {
            fanout: 8,
            max_claim_attempts: 8,
            max_claim_duration: Duration::from_secs(2),
            max_attempts: Some(DEFAULT_MAX_ATTEMPTS),
            redelivery_backoff: RedeliveryBackoff::default(),
            long_poll_recheck: Duration::from_millis(250),
            orphan_timeout: Duration::from_secs(300),
            max_turn_duration: Some(Duration::from_secs(300)),
            max_activity_duration: Some(Duration::from_secs(3600)),
            max_batch_messages: Some(1000),
            max_history_events: Some(50_000),
            max_history_bytes: Some(50 << 20),
        }
    }
}

/// Everything needed to build a provider. Construct with [`ProviderOptions::new`] and
/// adjust fields.
#[derive(Clone, PartialEq)]
pub struct ProviderOptions {
    /// `postgres://` URL. Never echoed in errors or logs. Rules: see [`crate::database_url`].
    /// Connections show as `application_name` `steadfast` in `pg_stat_activity` unless the
    /// URL's `application_name` parameter (or `PGAPPNAME`) names them.
    pub database_url: String,
    /// Schema for all tables; created if missing. Default `steadfast`.
    pub schema: String,
    /// Connection pool size. Default 10, or env `STEADFAST_PG_POOL_MAX`. Range 2..=1000
    /// (one connection is reserved for LISTEN in [`PollingMode::Listen`]).
    pub max_connections: u32,
    /// How long an operation waits for a pooled connection. Default 10 s. Range 1 ms..=10 min.
    pub acquire_timeout: Duration,
    /// Server-side `lock_timeout` for every statement (backstop against a foreign
    /// transaction holding rows). Default 2 s; not applied in [`PollingMode::SessionFree`].
    /// Range 1 ms..=10 min.
    pub statement_lock_timeout: Duration,
    /// Server-side `statement_timeout` for every statement, so that no statement (a claim
    /// loading a history too large to read in time, an ack of a huge turn) can run without
    /// bound. A claim that times out while reading its instance counts the attempt and
    /// backs off (the attempt ceiling then fails an instance that always does); a statement
    /// that times out is a retryable error. Migrations run without it. Default 60 s;
    /// `None` keeps the server's setting; not applied in [`PollingMode::SessionFree`] (set
    /// it on the role or database there). Range 1 ms..=1 h.
    pub statement_timeout: Option<Duration>,
    /// See [`PollingMode`]. Default [`PollingMode::Listen`].
    pub polling: PollingMode,
    /// Whether this provider shares wake-ups with the other providers of this process on
    /// the same database (the URL's host, port and database name) and schema: an enqueue
    /// through any of them wakes a waiting fetch of each at once, and an execution's end a
    /// waiter of any (in Node, a `Client`'s start wakes its `Runtime`'s dispatchers).
    /// Default true. Off, the provider behaves as a process of its own: the others' work
    /// reaches it by `NOTIFY` in [`PollingMode::Listen`] and at its recheck in
    /// [`PollingMode::SessionFree`] (for tests that stand in for several processes).
    pub share_wakes_in_process: bool,
    /// See [`ClaimOptions`].
    pub claim: ClaimOptions,
    /// Apply pending migrations on connect. Default true. When false, connecting fails if
    /// the schema is not at the version this crate needs.
    pub run_migrations: bool,
    /// A password that changes while the provider runs (an expiring access token), in
    /// place of the URL's: see [`RotatingPassword`](crate::RotatingPassword). Default
    /// None. Its current value must not be empty.
    pub password: Option<crate::PasswordFeed>,
}

impl std::fmt::Debug for ProviderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderOptions")
            .field("database_url", &"<redacted>")
            .field("schema", &self.schema)
            .field("max_connections", &self.max_connections)
            .field("acquire_timeout", &self.acquire_timeout)
            .field("statement_lock_timeout", &self.statement_lock_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .field("polling", &self.polling)
            .field("share_wakes_in_process", &self.share_wakes_in_process)
            .field("claim", &self.claim)
            .field("run_migrations", &self.run_migrations)
            .field("password", &self.password)
            .finish()
    }
}

impl ProviderOptions {
    pub fn new(database_url: impl Into<String>) -> Self {
        let max_connections = std::env::var("STEADFAST_PG_POOL_MAX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10);
        Self {
            database_url: database_url.into(),
            schema: DEFAULT_SCHEMA.to_string(),
            max_connections,
            acquire_timeout: Duration::from_secs(10),
            statement_lock_timeout: Duration::from_secs(2),
            statement_timeout: Some(Duration::from_secs(60)),
            polling: PollingMode::Listen,
            share_wakes_in_process: true,
            claim: ClaimOptions::default(),
            run_migrations: true,
            password: None,
        }
    }

    pub fn with_schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Check every field; the error names the field and the rule it broke.
    pub fn validate(&self) -> Result<(), String> {
        fn range_int<T: PartialOrd + std::fmt::Display>(
            field: &str,
            v: T,
            lo: T,
            hi: T,
        ) -> Result<(), String> {
            if v < lo || v > hi {
                return Err(format!("{field} must be between {lo} and {hi} (got {v})"));
            }
            Ok(())
        }
        fn range_dur(field: &str, v: Duration, lo: Duration, hi: Duration) -> Result<(), String> {
            if v < lo || v > hi {
                return Err(format!(
                    "{field} must be between {} ms and {} ms (got {} ms)",
                    lo.as_millis(),
                    hi.as_millis(),
                    v.as_millis()
                ));
            }
            Ok(())
        }
        let ms = Duration::from_millis;
        crate::database_url::validate(&self.database_url)?;
        if self
            .password
            .as_ref()
            .is_some_and(|p| p.current().is_empty())
        {
            return Err("password must not be empty".into());
        }
        crate::schema::SchemaName::parse(&self.schema).map_err(|e| format!("schema: {e}"))?;
        range_int("max_connections", self.max_connections, 2, 1000)?;
        range_dur("acquire_timeout", self.acquire_timeout, ms(1), ms(600_000))?;
        range_dur(
            "statement_lock_timeout",
            self.statement_lock_timeout,
            ms(1),
            ms(600_000),
        )?;
        if let Some(t) = self.statement_timeout {
            range_dur("statement_timeout", t, ms(1), ms(3_600_000))?;
        }
        let c = &self.claim;
        range_int("claim.fanout", c.fanout, 1, 1024)?;
        range_int("claim.max_claim_attempts", c.max_claim_attempts, 1, 1024)?;
        range_dur(
            "claim.max_claim_duration",
            c.max_claim_duration,
            ms(1),
            ms(60_000),
        )?;
        if let Some(m) = c.max_attempts {
            range_int("claim.max_attempts", m, 1, 1_000_000)?;
        }
        range_dur(
            "claim.long_poll_recheck",
            c.long_poll_recheck,
            ms(10),
            ms(60_000),
        )?;
        range_dur(
            "claim.orphan_timeout",
            c.orphan_timeout,
            ms(1),
            ms(30 * 86_400_000),
        )?;
        if let Some(t) = c.max_turn_duration {
            range_dur("claim.max_turn_duration", t, ms(100), ms(86_400_000))?;
        }
        if let Some(t) = c.max_activity_duration {
            range_dur(
                "claim.max_activity_duration",
                t,
                ms(100),
                ms(7 * 86_400_000),
            )?;
        }
        if let Some(n) = c.max_batch_messages {
            range_int("claim.max_batch_messages", n, 1, 1_000_000)?;
        }
        if let Some(n) = c.max_history_events {
            range_int("claim.max_history_events", n, 1, 100_000_000)?;
        }
        if let Some(n) = c.max_history_bytes {
            range_int("claim.max_history_bytes", n, 1 << 10, 1 << 30)?;
        }
        let b = &c.redelivery_backoff;
        range_dur(
            "claim.redelivery_backoff.cap",
            b.cap,
            Duration::ZERO,
            ms(3_600_000),
        )?;
        if b.base > b.cap {
            return Err(format!(
                "claim.redelivery_backoff.base must be at most cap ({} ms > {} ms)",
                b.base.as_millis(),
                b.cap.as_millis()
            ));
        }
        if !(0.0..=1.0).contains(&b.jitter) {
            return Err(format!(
                "claim.redelivery_backoff.jitter must be between 0 and 1 (got {})",
                b.jitter
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        ProviderOptions::new("postgres://u@h/db")
            .validate()
            .unwrap();
    }

    #[test]
    fn errors_name_the_field_and_rule() {
        let mut o = ProviderOptions::new("postgres://u@h/db");
        o.claim.fanout = 0;
        let e = o.validate().unwrap_err();
        assert!(
            e.contains("claim.fanout") && e.contains("between 1 and 1024"),
            "{e}"
        );

        let mut o = ProviderOptions::new("postgres://u:secret@h/db");
        o.schema = "bad;name".into();
        let e = o.validate().unwrap_err();
        assert!(e.starts_with("schema:"), "{e}");
        assert!(!e.contains("secret"));

        let o = ProviderOptions::new("mysql://u:secret@h/db");
        let e = o.validate().unwrap_err();
        assert!(e.contains("database_url") && !e.contains("secret"), "{e}");
    }

    #[test]
    fn backoff_grows_exponentially_and_caps() {
        let b = RedeliveryBackoff::default();
        assert_eq!(b.delay(1, 0.0), Duration::from_millis(20));
        assert_eq!(b.delay(2, 0.0), Duration::from_millis(40));
        assert_eq!(b.delay(4, 0.0), Duration::from_millis(160));
        assert_eq!(b.delay(40, 0.0), Duration::from_secs(30));
        assert!(b.delay(1, 0.999) < Duration::from_millis(25));
    }
}
