//! Activities with a retry policy (`ctx.scheduleActivityWithRetry`), run by steadfast rather
//! than by duroxide's `schedule_activity_with_retry`. The attempts, per-attempt timeouts and
//! backoff timers are scheduled in the same order as duroxide's loop schedules them, so a
//! history written by either replays under the other. Two rules are added:
//! - an activity error marked non-retryable (`NonRetryableError` in JS, see lib/failure.js)
//!   ends the retries at once, and is the result;
//! - `totalTimeoutMs` bounds all attempts and the backoff between them: a timer scheduled
//!   before the first attempt, raced against the whole loop.

use std::time::Duration;

use duroxide::{BackoffStrategy, Either2, OrchestrationContext, RetryPolicy};
use serde::Deserialize;
use serde_json::Value;

/// What lib/failure.js appends to an activity's error text: this, then the error's shape as
/// JSON (`nonRetryable: true` when the error is not to be retried).
const SHAPE_TRAILER: &str = "\n[steadfast:error] ";

/// Retry backoff as JS describes it (validated there).
#[derive(Debug, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
enum Backoff {
    None,
    Fixed {
        delay_ms: u64,
    },
    Linear {
        base_ms: u64,
        max_ms: u64,
    },
    Exponential {
        base_ms: u64,
        multiplier: f64,
        max_ms: u64,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Retry {
    max_attempts: u32,
    timeout_ms: Option<u64>,
    total_timeout_ms: Option<u64>,
    backoff: Option<Backoff>,
}

fn retry_policy(r: Retry) -> Result<RetryPolicy, String> {
    if r.max_attempts == 0 {
        return Err("retry.maxAttempts must be at least 1".into());
    }
    let mut policy = RetryPolicy::new(r.max_attempts);
    if let Some(ms) = r.timeout_ms {
        policy = policy.with_timeout(Duration::from_millis(ms));
    }
    if let Some(b) = r.backoff {
        let ms = Duration::from_millis;
        policy = policy.with_backoff(match b {
            Backoff::None => BackoffStrategy::None,
            Backoff::Fixed { delay_ms } => BackoffStrategy::Fixed {
                delay: ms(delay_ms),
            },
            Backoff::Linear { base_ms, max_ms } => BackoffStrategy::Linear {
                base: ms(base_ms),
                max: ms(max_ms),
            },
            Backoff::Exponential {
                base_ms,
                multiplier,
                max_ms,
            } => BackoffStrategy::Exponential {
                base: ms(base_ms),
                multiplier,
                max: ms(max_ms),
            },
        });
    }
    Ok(policy)
}

/// One `activityWithRetry` task, checked.
pub(crate) struct RetriedActivity {
    name: String,
    input: String,
    session_id: Option<String>,
    policy: RetryPolicy,
    total_timeout: Option<Duration>,
}

impl RetriedActivity {
    pub(crate) fn new(
        name: String,
        input: String,
        session_id: Option<String>,
        retry: Retry,
    ) -> Result<Self, String> {
        let total_timeout = retry.total_timeout_ms.map(Duration::from_millis);
        Ok(Self {
            name,
            input,
            session_id,
            policy: retry_policy(retry)?,
            total_timeout,
        })
    }

    pub(crate) async fn run(self, ctx: &OrchestrationContext) -> Result<String, String> {
        let Some(total) = self.total_timeout else {
            return self.attempts(ctx).await;
        };
        let deadline = async {
            ctx.schedule_timer(total).await;
            Err::<String, String>(format!(
                "timeout: the retries ran out of their total time (totalTimeoutMs = {} ms)",
                total.as_millis()
            ))
        };
        match ctx.select2(self.attempts(ctx), deadline).await {
            Either2::First(result) | Either2::Second(result) => result,
        }
    }

    async fn attempts(&self, ctx: &OrchestrationContext) -> Result<String, String> {
        let mut last_error = String::new();
        for attempt in 1..=self.policy.max_attempts {
            let result = match self.policy.timeout {
                Some(timeout) => {
                    let deadline = async {
                        ctx.schedule_timer(timeout).await;
                        Err::<String, String>("timeout: activity timed out".to_string())
                    };
                    match ctx.select2(self.attempt(ctx), deadline).await {
                        Either2::First(result) => result,
                        // A timed-out attempt is not retried (as in duroxide).
                        Either2::Second(timeout) => return timeout,
                    }
                }
                None => self.attempt(ctx).await,
            };
            match result {
                Ok(value) => return Ok(value),
                Err(e) if is_non_retryable(&e) => return Err(e),
                Err(e) => {
                    if attempt < self.policy.max_attempts {
                        ctx.trace(
                            "warn",
                            format!(
                                "Activity '{}' attempt {attempt}/{} failed: {e}. Retrying...",
                                self.name, self.policy.max_attempts
                            ),
                        );
                        let delay = self.policy.delay_for_attempt(attempt);
                        if !delay.is_zero() {
                            ctx.schedule_timer(delay).await;
                        }
                    }
                    last_error = e;
                }
            }
        }
        Err(last_error)
    }

    async fn attempt(&self, ctx: &OrchestrationContext) -> Result<String, String> {
        match &self.session_id {
            Some(session) => {
                ctx.schedule_activity_on_session(&self.name, &self.input, session)
                    .await
            }
            None => ctx.schedule_activity(&self.name, &self.input).await,
        }
    }
}

/// Whether an activity's error text carries the non-retryable mark.
fn is_non_retryable(error: &str) -> bool {
    error
        .rfind(SHAPE_TRAILER)
        .and_then(|at| serde_json::from_str::<Value>(&error[at + SHAPE_TRAILER.len()..]).ok())
        .is_some_and(|shape| shape.get("nonRetryable") == Some(&Value::Bool(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_attempts_is_an_error_not_a_panic() {
        let e = retry_policy(Retry {
            max_attempts: 0,
            timeout_ms: None,
            total_timeout_ms: None,
            backoff: None,
        })
        .unwrap_err();
        assert!(e.contains("maxAttempts"));
    }

    #[test]
    fn only_the_trailer_marks_an_error_non_retryable() {
        let marked =
            "boom\n[steadfast:error] {\"name\":\"NonRetryableError\",\"nonRetryable\":true}";
        assert!(is_non_retryable(marked));
        assert!(!is_non_retryable(
            "boom\n[steadfast:error] {\"name\":\"Error\"}"
        ));
        assert!(!is_non_retryable("nonRetryable: true"));
        assert!(!is_non_retryable(
            "boom\n[steadfast:error] {\"nonRetryable\":\"true\"}"
        ));
        assert!(!is_non_retryable("boom\n[steadfast:error] not json"));
    }
}
