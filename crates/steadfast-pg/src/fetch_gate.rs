//! One backoff for all of a provider's fetches while the database cannot take claims.
//!
//! A claim that fails with a retryable error (the server read-only after a failover, out of
//! disk or memory, unreachable, or the claim out of time) closes the gate: for a backoff
//! that doubles with each failure (100 ms up to 5 s, with jitter), every fetch of this
//! provider, whichever dispatcher makes it, waits it out and comes back empty without
//! touching the database. Then one fetch probes; the rest keep waiting until it succeeds
//! (the gate opens) or fails (a longer backoff). Without it each of the process's
//! dispatchers retried on its own schedule, so a fleet of N processes × M dispatchers kept
//! a struggling server busy with N × M failing claims per backoff period.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::Rng;

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a fetch waits while another fetch's probe is out.
const PROBE_WAIT: Duration = Duration::from_millis(50);

pub(crate) struct FetchGate {
    origin: Instant,
    /// Consecutive failed claims; 0 = open.
    failures: AtomicU32,
    /// ms since `origin` before which nobody claims.
    closed_until: AtomicU64,
    probing: AtomicBool,
}

/// A fetch let through the gate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pass {
    Open,
    Probe,
}

impl Default for FetchGate {
    fn default() -> Self {
        Self {
            origin: Instant::now(),
            failures: AtomicU32::new(0),
            closed_until: AtomicU64::new(0),
            probing: AtomicBool::new(false),
        }
    }
}

impl FetchGate {
    fn now(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    /// Let a fetch through, or say how long it should wait instead.
    pub fn pass(&self) -> Result<Pass, Duration> {
        if self.failures.load(Ordering::Acquire) == 0 {
            return Ok(Pass::Open);
        }
        let now = self.now();
        let until = self.closed_until.load(Ordering::Acquire);
        if now < until {
            return Err(Duration::from_millis(until - now));
        }
        match self
            .probing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(Pass::Probe),
            Err(_) => Err(PROBE_WAIT),
        }
    }

    /// The claim reached the database and got an answer. Only a probe's answer opens a
    /// closed gate: a claim let through before the gate closed may have found nothing to
    /// write (its candidate held by a claim that failed), which says nothing about now.
    pub fn succeeded(&self, pass: Pass) {
        if pass != Pass::Probe {
            return;
        }
        if self.failures.swap(0, Ordering::AcqRel) > 0 {
            tracing::info!(target: "steadfast_pg", event = "steadfast.claims_resumed", "claims succeed again: the fetch backoff is over");
        }
        self.probing.store(false, Ordering::Release);
    }

    /// The claim failed with a retryable error: close the gate for a longer backoff.
    pub fn failed(&self, pass: Pass, error: &dyn std::fmt::Display) {
        // Claims that were already under way when the first one failed do not lengthen
        // the backoff; the first failure and each failed probe do.
        let (failures, first) = if pass == Pass::Probe || self.failures.load(Ordering::Acquire) == 0
        {
            let before = self.failures.fetch_add(1, Ordering::AcqRel);
            (before + 1, before == 0)
        } else {
            (self.failures.load(Ordering::Acquire).max(1), false)
        };
        let base = FIRST_BACKOFF
            .saturating_mul(1 << (failures - 1).min(16))
            .min(MAX_BACKOFF);
        let backoff = base.mul_f64(1.0 + rand::thread_rng().r#gen::<f64>() * 0.5);
        let until = self.now() + backoff.as_millis() as u64;
        self.closed_until.fetch_max(until, Ordering::AcqRel);
        if first {
            tracing::warn!(target: "steadfast_pg", event = "steadfast.claims_backing_off", error = %error, "a claim failed with a retryable error: every fetch of this provider backs off together until one succeeds");
        }
        if pass == Pass::Probe {
            self.probing.store(false, Ordering::Release);
        }
    }

    /// A fetch let through ended without a retryable failure or success of its claim.
    pub fn released(&self, pass: Pass) {
        if pass == Pass::Probe {
            self.probing.store(false, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_closes_the_gate_then_one_probe_reopens_it() {
        let gate = FetchGate::default();
        assert_eq!(gate.pass(), Ok(Pass::Open));
        gate.failed(Pass::Open, &"read-only");
        let wait = gate.pass().unwrap_err();
        assert!(wait <= Duration::from_millis(150), "{wait:?}");
        std::thread::sleep(wait + Duration::from_millis(5));
        assert_eq!(gate.pass(), Ok(Pass::Probe));
        assert_eq!(gate.pass(), Err(PROBE_WAIT), "one probe at a time");
        gate.failed(Pass::Probe, &"read-only");
        let longer = gate.pass().unwrap_err();
        assert!(longer > Duration::from_millis(150), "{longer:?}");
        std::thread::sleep(longer + Duration::from_millis(5));
        let probe = gate.pass().unwrap();
        gate.succeeded(probe);
        assert_eq!(gate.pass(), Ok(Pass::Open));
    }

    #[test]
    fn only_a_probe_opens_a_closed_gate() {
        let gate = FetchGate::default();
        gate.failed(Pass::Open, &"read-only");
        gate.succeeded(Pass::Open);
        assert!(
            gate.pass().is_err(),
            "a claim from before the closing reopened it"
        );
    }

    #[test]
    fn the_backoff_is_capped() {
        let gate = FetchGate::default();
        for _ in 0..40 {
            gate.failed(Pass::Open, &"down");
        }
        assert!(gate.pass().unwrap_err() <= MAX_BACKOFF.mul_f64(1.5));
    }
}
