//! Typed diagnostics: every condition that means "a message may be stuck" or "a
//! disposition was lost" is published on a broadcast channel (subscribe with
//! [`crate::PostgresProvider::subscribe`]) and logged through `tracing` with a stable
//! `event` field, so it can be alerted on and never reads as two unrelated warnings.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::broadcast;

/// Which queue a diagnostic concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QueueKind {
    Orchestrator,
    Worker,
}

impl QueueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueKind::Orchestrator => "orchestrator",
            QueueKind::Worker => "worker",
        }
    }
}

/// The kinds of diagnostic, each with a stable name (`event` field in logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticKind {
    /// A poison disposition was committed while its lease was still live.
    PoisonCommitted,
    /// A poison disposition was committed although its lease had expired, been released
    /// or been superseded — the case that loses the disposition upstream.
    PoisonCommittedWithoutLease,
    /// A poison disposition could not be committed; `reason` says why. The message is
    /// still bounded by the attempt ceiling if one is configured.
    PoisonLost,
    /// The claim refused to hand a message out again: it passed `max_attempts + 1`. The
    /// claim failed it as poison and dead-lettered its messages.
    AttemptCeilingEnforced,
    /// The claim refused to hand an instance out because loading its history would pass
    /// `ClaimOptions::max_history_events` or `max_history_bytes`: it failed the execution
    /// (non-retryable, naming the limit) and dead-lettered its messages (reason
    /// `history_too_large`).
    HistoryTooLarge,
    /// A fetch gave up after its bounded number of tries or its time bound.
    ClaimExhausted,
    /// An ordinary ack (or renewal/abandon) was refused because its lock token is dead.
    AckRejected,
    /// Orchestrator messages to an instance that nothing started waited
    /// `ClaimOptions::orphan_timeout` and were moved to the dead-letter table (reason
    /// `orphaned`). One per instance; `message_kind` lists the work-item kinds moved and
    /// `reason` their number.
    MessagesOrphaned,
}

impl DiagnosticKind {
    pub fn event_name(self) -> &'static str {
        match self {
            DiagnosticKind::PoisonCommitted => "steadfast.poison_committed",
            DiagnosticKind::PoisonCommittedWithoutLease => {
                "steadfast.poison_committed_without_lease"
            }
            DiagnosticKind::PoisonLost => "steadfast.poison_lost",
            DiagnosticKind::AttemptCeilingEnforced => "steadfast.attempt_ceiling_enforced",
            DiagnosticKind::HistoryTooLarge => "steadfast.history_too_large",
            DiagnosticKind::ClaimExhausted => "steadfast.claim_exhausted",
            DiagnosticKind::AckRejected => "steadfast.ack_rejected",
            DiagnosticKind::MessagesOrphaned => "steadfast.messages_orphaned",
        }
    }
}

/// One diagnostic record. Fields that do not apply to a kind are `None`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub queue: QueueKind,
    pub instance_id: Option<String>,
    pub execution_id: Option<u64>,
    pub attempt_count: Option<u32>,
    pub max_attempts: Option<u32>,
    /// The work item kind(s) involved, e.g. `StartOrchestration` or `ActivityExecute`.
    pub message_kind: Option<String>,
    pub reason: String,
    /// Wall-clock time of this process when the diagnostic was raised (ms since epoch).
    pub at_ms: u64,
}

impl Diagnostic {
    pub(crate) fn new(kind: DiagnosticKind, queue: QueueKind, reason: impl Into<String>) -> Self {
        let at_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Self {
            kind,
            queue,
            instance_id: None,
            execution_id: None,
            attempt_count: None,
            max_attempts: None,
            message_kind: None,
            reason: reason.into(),
            at_ms,
        }
    }

    pub(crate) fn instance(mut self, id: &str) -> Self {
        self.instance_id = Some(id.to_string());
        self
    }

    pub(crate) fn execution(mut self, id: u64) -> Self {
        self.execution_id = Some(id);
        self
    }

    pub(crate) fn attempts(mut self, attempt_count: Option<u32>, max: Option<u32>) -> Self {
        self.attempt_count = attempt_count;
        self.max_attempts = max;
        self
    }

    pub(crate) fn message_kind(mut self, kind: impl Into<String>) -> Self {
        self.message_kind = Some(kind.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.kind.event_name(), self.queue.as_str())?;
        if let Some(i) = &self.instance_id {
            write!(f, " instance={i}")?;
        }
        if let Some(e) = self.execution_id {
            write!(f, " execution={e}")?;
        }
        if let Some(a) = self.attempt_count {
            write!(f, " attempt_count={a}")?;
        }
        if let Some(m) = self.max_attempts {
            write!(f, " max_attempts={m}")?;
        }
        if let Some(k) = &self.message_kind {
            write!(f, " message_kind={k}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Publishes diagnostics to subscribers and to `tracing`.
#[derive(Clone)]
pub(crate) struct DiagnosticSink {
    sender: broadcast::Sender<Diagnostic>,
}

impl DiagnosticSink {
    pub(crate) fn new() -> Self {
        let (sender, _) = broadcast::channel(1024);
        Self { sender }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Diagnostic> {
        self.sender.subscribe()
    }

    pub(crate) fn emit(&self, d: Diagnostic) {
        let event = d.kind.event_name();
        let instance = d.instance_id.as_deref().unwrap_or("");
        macro_rules! log {
            ($level:ident) => {
                tracing::$level!(
                    target: "steadfast_pg",
                    event,
                    queue = d.queue.as_str(),
                    instance,
                    execution_id = d.execution_id,
                    attempt_count = d.attempt_count,
                    max_attempts = d.max_attempts,
                    message_kind = d.message_kind.as_deref(),
                    reason = %d.reason,
                    "{event}"
                )
            };
        }
        match d.kind {
            DiagnosticKind::PoisonLost => log!(error),
            DiagnosticKind::PoisonCommitted | DiagnosticKind::ClaimExhausted => log!(info),
            _ => log!(warn),
        }
        crate::metrics::diagnostic_raised(event, d.queue);
        // No subscribers is fine: the tracing record above is the durable trail.
        let _ = self.sender.send(d);
    }
}
