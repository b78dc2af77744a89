//! Runtime options as they arrive from JS (already validated there, camelCase, in ms) and
//! their conversion to duroxide's `RuntimeOptions` plus steadfast-pg claim overrides.
//!
//! The JS layer (`lib/options.js`) is the place that names fields and rules for users; the
//! checks here are a backstop so that nothing reaching duroxide can panic in `start()`.

use std::time::Duration;

use duroxide::providers::TagFilter;
use duroxide::runtime::limits::{MAX_TAG_NAME_BYTES, MAX_WORKER_TAGS};
use duroxide::runtime::{LogFormat, RuntimeOptions, UnregisteredBackoffConfig};
use napi_derive::napi;
use steadfast_pg::ProviderOptions;

/// Every duroxide 0.1.32 `RuntimeOptions` field plus the steadfast-pg claim options.
#[napi(object)]
#[derive(Default, Clone)]
pub struct NativeRuntimeOptions {
    pub orchestration_concurrency: Option<u32>,
    pub worker_concurrency: Option<u32>,
    pub dispatcher_poll_interval_ms: Option<u32>,
    pub dispatcher_long_poll_timeout_ms: Option<u32>,
    pub orchestrator_lock_timeout_ms: Option<u32>,
    pub orchestrator_lock_renewal_buffer_ms: Option<u32>,
    pub worker_lock_timeout_ms: Option<u32>,
    pub worker_lock_renewal_buffer_ms: Option<u32>,
    pub max_attempts: Option<u32>,
    pub unregistered_backoff_base_ms: Option<u32>,
    pub unregistered_backoff_max_ms: Option<u32>,
    pub activity_cancellation_grace_period_ms: Option<u32>,
    pub session_lock_timeout_ms: Option<u32>,
    pub session_lock_renewal_buffer_ms: Option<u32>,
    pub session_idle_timeout_ms: Option<u32>,
    pub session_cleanup_interval_ms: Option<u32>,
    pub max_sessions_per_runtime: Option<u32>,
    pub worker_node_id: Option<String>,
    /// `defaultOnly`, `any`, `none`, `tags` or `defaultAnd` (the last two use
    /// `workerTagFilterTags`).
    pub worker_tag_filter: Option<String>,
    pub worker_tag_filter_tags: Option<Vec<String>>,
    /// `json`, `pretty` or `compact`.
    pub log_format: Option<String>,
    pub log_level: Option<String>,
    /// `tracing_subscriber::EnvFilter` directives, e.g. `warn,steadfast_pg=info`.
    pub log_filter: Option<String>,
    pub service_name: Option<String>,
    pub service_version: Option<String>,
    pub gauge_poll_interval_ms: Option<u32>,
    /// ms without an answer from the event loop before renewals and fetches are refused;
    /// 0 turns the watch off (default [`DEFAULT_EVENT_LOOP_STALL_MS`]).
    pub event_loop_stall_ms: Option<u32>,
    // steadfast-pg claim options (PostgreSQL only)
    pub fetch_fanout: Option<u32>,
    pub max_claim_attempts: Option<u32>,
    pub max_claim_duration_ms: Option<u32>,
    pub redelivery_backoff_base_ms: Option<u32>,
    pub redelivery_backoff_cap_ms: Option<u32>,
    pub redelivery_backoff_jitter: Option<f64>,
    pub long_poll_recheck_ms: Option<u32>,
    pub orphan_timeout_ms: Option<u32>,
    pub max_turn_duration_ms: Option<u32>,
    pub max_activity_duration_ms: Option<u32>,
    pub max_batch_messages: Option<u32>,
    pub max_history_events: Option<u32>,
    pub max_history_bytes: Option<u32>,
}

/// `eventLoopStallMs` when not set.
pub(crate) const DEFAULT_EVENT_LOOP_STALL_MS: u32 = 10_000;

/// The event-loop watch's threshold; `None` when turned off.
pub(crate) fn event_loop_stall(o: &NativeRuntimeOptions) -> Option<Duration> {
    match o.event_loop_stall_ms.unwrap_or(DEFAULT_EVENT_LOOP_STALL_MS) {
        0 => None,
        v => Some(ms(v)),
    }
}

/// Claim options to merge into a PostgreSQL provider's options for the runtime's own pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ClaimOverrides {
    pub fanout: Option<u32>,
    pub max_claim_attempts: Option<u32>,
    pub max_claim_duration: Option<Duration>,
    pub backoff_base: Option<Duration>,
    pub backoff_cap: Option<Duration>,
    pub backoff_jitter: Option<f64>,
    pub long_poll_recheck: Option<Duration>,
    pub orphan_timeout: Option<Duration>,
    pub max_turn_duration: Option<Duration>,
    pub max_activity_duration: Option<Duration>,
    pub max_batch_messages: Option<u32>,
    pub max_history_events: Option<u32>,
    pub max_history_bytes: Option<u32>,
    /// Always the runtime's `max_attempts`.
    pub max_attempts: u32,
}

impl ClaimOverrides {
    pub fn apply(&self, o: &mut ProviderOptions) {
        let c = &mut o.claim;
        if let Some(v) = self.fanout {
            c.fanout = v;
        }
        if let Some(v) = self.max_claim_attempts {
            c.max_claim_attempts = v;
        }
        if let Some(v) = self.max_claim_duration {
            c.max_claim_duration = v;
        }
        if let Some(v) = self.backoff_base {
            c.redelivery_backoff.base = v;
        }
        if let Some(v) = self.backoff_cap {
            c.redelivery_backoff.cap = v;
        }
        if let Some(v) = self.backoff_jitter {
            c.redelivery_backoff.jitter = v;
        }
        if let Some(v) = self.long_poll_recheck {
            c.long_poll_recheck = v;
        }
        if let Some(v) = self.orphan_timeout {
            c.orphan_timeout = v;
        }
        if let Some(v) = self.max_turn_duration {
            c.max_turn_duration = Some(v);
        }
        if let Some(v) = self.max_activity_duration {
            c.max_activity_duration = Some(v);
        }
        if let Some(v) = self.max_batch_messages {
            c.max_batch_messages = Some(v);
        }
        if let Some(v) = self.max_history_events {
            c.max_history_events = Some(v);
        }
        if let Some(v) = self.max_history_bytes {
            c.max_history_bytes = Some(v.into());
        }
        c.max_attempts = Some(self.max_attempts);
    }
}

fn ms(v: u32) -> Duration {
    Duration::from_millis(v.into())
}

fn tag_set(field: &str, tags: Option<&Vec<String>>) -> Result<Vec<String>, String> {
    let tags = tags.cloned().unwrap_or_default();
    if tags.is_empty() || tags.len() > MAX_WORKER_TAGS {
        return Err(format!(
            "{field} needs between 1 and {MAX_WORKER_TAGS} tags (got {})",
            tags.len()
        ));
    }
    for t in &tags {
        if t.is_empty() || t.len() > MAX_TAG_NAME_BYTES {
            return Err(format!(
                "{field} tags must be 1 to {MAX_TAG_NAME_BYTES} bytes long"
            ));
        }
    }
    Ok(tags)
}

/// Convert and check. Errors name the JS field.
pub(crate) fn build(o: &NativeRuntimeOptions) -> Result<(RuntimeOptions, ClaimOverrides), String> {
    let mut r = RuntimeOptions::default();
    if let Some(v) = o.orchestration_concurrency {
        r.orchestration_concurrency = v as usize;
    }
    if let Some(v) = o.worker_concurrency {
        r.worker_concurrency = v as usize;
    }
    if let Some(v) = o.dispatcher_poll_interval_ms {
        r.dispatcher_min_poll_interval = ms(v);
    }
    if let Some(v) = o.dispatcher_long_poll_timeout_ms {
        r.dispatcher_long_poll_timeout = ms(v);
    }
    if let Some(v) = o.orchestrator_lock_timeout_ms {
        r.orchestrator_lock_timeout = ms(v);
    }
    if let Some(v) = o.orchestrator_lock_renewal_buffer_ms {
        r.orchestrator_lock_renewal_buffer = ms(v);
    }
    if let Some(v) = o.worker_lock_timeout_ms {
        r.worker_lock_timeout = ms(v);
    }
    if let Some(v) = o.worker_lock_renewal_buffer_ms {
        r.worker_lock_renewal_buffer = ms(v);
    }
    if let Some(v) = o.max_attempts {
        if v == 0 {
            return Err("maxAttempts must be at least 1".into());
        }
        r.max_attempts = v;
    }
    let mut backoff = UnregisteredBackoffConfig::default();
    if let Some(v) = o.unregistered_backoff_base_ms {
        backoff.base_delay = ms(v);
    }
    if let Some(v) = o.unregistered_backoff_max_ms {
        backoff.max_delay = ms(v);
    }
    r.unregistered_backoff = backoff;
    if let Some(v) = o.activity_cancellation_grace_period_ms {
        r.activity_cancellation_grace_period = ms(v);
    }
    if let Some(v) = o.session_lock_timeout_ms {
        r.session_lock_timeout = ms(v);
    }
    if let Some(v) = o.session_lock_renewal_buffer_ms {
        r.session_lock_renewal_buffer = ms(v);
    }
    if let Some(v) = o.session_idle_timeout_ms {
        r.session_idle_timeout = ms(v);
    }
    if let Some(v) = o.session_cleanup_interval_ms {
        if v == 0 {
            return Err("sessionCleanupIntervalMs must be at least 1".into());
        }
        r.session_cleanup_interval = ms(v);
    }
    if let Some(v) = o.max_sessions_per_runtime {
        r.max_sessions_per_runtime = v as usize;
    }
    r.worker_node_id = o.worker_node_id.clone();
    r.worker_tag_filter = match o.worker_tag_filter.as_deref() {
        None | Some("defaultOnly") => TagFilter::DefaultOnly,
        Some("any") => TagFilter::Any,
        Some("none") => TagFilter::None,
        Some("tags") => TagFilter::tags(tag_set(
            "workerTagFilter.tags",
            o.worker_tag_filter_tags.as_ref(),
        )?),
        Some("defaultAnd") => TagFilter::default_and(tag_set(
            "workerTagFilter.defaultAnd",
            o.worker_tag_filter_tags.as_ref(),
        )?),
        Some(other) => return Err(format!("workerTagFilter: unknown filter {other:?}")),
    };
    let obs = &mut r.observability;
    match o.log_format.as_deref() {
        None | Some("pretty") => obs.log_format = LogFormat::Pretty,
        Some("json") => obs.log_format = LogFormat::Json,
        Some("compact") => obs.log_format = LogFormat::Compact,
        Some(other) => {
            return Err(format!(
                "logFormat must be \"json\", \"pretty\" or \"compact\" (got {other:?})"
            ));
        }
    }
    if let Some(v) = &o.log_level {
        obs.log_level = v.clone();
    }
    if let Some(v) = &o.service_name {
        obs.service_name = v.clone();
    }
    obs.service_version = o.service_version.clone();
    if let Some(v) = o.gauge_poll_interval_ms {
        if v == 0 {
            return Err("gaugePollIntervalMs must be at least 1".into());
        }
        obs.gauge_poll_interval = ms(v);
    }
    // duroxide panics in start() unless the session idle timeout exceeds the worker lock
    // renewal interval (timeout - buffer, or 1 s when that underflows).
    let renewal = r
        .worker_lock_timeout
        .checked_sub(r.worker_lock_renewal_buffer)
        .unwrap_or(Duration::from_secs(1));
    if r.session_idle_timeout <= renewal {
        return Err(format!(
            "sessionIdleTimeoutMs ({} ms) must be greater than workerLockTimeoutMs - \
             workerLockRenewalBufferMs ({} ms)",
            r.session_idle_timeout.as_millis(),
            renewal.as_millis()
        ));
    }
    let claim = ClaimOverrides {
        fanout: o.fetch_fanout,
        max_claim_attempts: o.max_claim_attempts,
        max_claim_duration: o.max_claim_duration_ms.map(ms),
        backoff_base: o.redelivery_backoff_base_ms.map(ms),
        backoff_cap: o.redelivery_backoff_cap_ms.map(ms),
        backoff_jitter: o.redelivery_backoff_jitter,
        long_poll_recheck: o.long_poll_recheck_ms.map(ms),
        orphan_timeout: o.orphan_timeout_ms.map(ms),
        max_turn_duration: o.max_turn_duration_ms.map(ms),
        max_activity_duration: o.max_activity_duration_ms.map(ms),
        max_batch_messages: o.max_batch_messages,
        max_history_events: o.max_history_events,
        max_history_bytes: o.max_history_bytes,
        max_attempts: r.max_attempts,
    };
    Ok((r, claim))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_duroxide() {
        let (r, c) = build(&NativeRuntimeOptions::default()).unwrap();
        let d = RuntimeOptions::default();
        assert_eq!(r.orchestration_concurrency, d.orchestration_concurrency);
        assert_eq!(r.max_attempts, d.max_attempts);
        assert_eq!(c.max_attempts, 10);
    }

    #[test]
    fn session_invariant_is_checked_instead_of_panicking() {
        let o = NativeRuntimeOptions {
            session_idle_timeout_ms: Some(1000),
            ..Default::default()
        };
        let e = build(&o).unwrap_err();
        assert!(e.contains("sessionIdleTimeoutMs"), "{e}");
    }

    #[test]
    fn tag_filters_are_bounded() {
        let o = NativeRuntimeOptions {
            worker_tag_filter: Some("tags".into()),
            worker_tag_filter_tags: Some(vec![]),
            ..Default::default()
        };
        assert!(build(&o).unwrap_err().contains("workerTagFilter.tags"));
    }

    #[test]
    fn claim_overrides_carry_max_attempts() {
        let o = NativeRuntimeOptions {
            max_attempts: Some(3),
            fetch_fanout: Some(1),
            ..Default::default()
        };
        let (_, c) = build(&o).unwrap();
        let mut p = ProviderOptions::new("postgres://u@h/db");
        c.apply(&mut p);
        assert_eq!(p.claim.max_attempts, Some(3));
        assert_eq!(p.claim.fanout, 1);
    }
}
