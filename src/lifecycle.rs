//! Lifecycle events for the JS `Runtime` (an EventEmitter): an orchestration execution
//! started, completed, failed or continued as new; an activity failed. Read off what the
//! runtime commits (the turn and activity acks passing through [`ObservedProvider`]), and
//! emitted only after the commit succeeded, so an event never announces something that
//! was rolled back. Off until JS has a listener for one of them: then every ack is
//! scanned (a pass over the turn's new events) and activity names are remembered from
//! fetch to ack.
//!
//! [`ObservedProvider`]: crate::diagnostics::ObservedProvider

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use duroxide::providers::WorkItem;
use duroxide::{Event, EventKind};
use serde::Serialize;

use crate::diagnostics::{DiagnosticSink, now_ms};

/// The payload of a lifecycle event (`kind` discriminates).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LifecycleEvent {
    /// `orchestrationStarted`, `orchestrationCompleted`, `orchestrationFailed`,
    /// `orchestrationContinuedAsNew` or `activityFailed`.
    pub kind: &'static str,
    pub instance_id: String,
    pub execution_id: u64,
    /// The orchestration's name and version (started), or the activity's name (when it
    /// was fetched while events were on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A sub-orchestration's parent instance (started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_instance_id: Option<String>,
    /// The activity's id within its execution (activityFailed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activity_id: Option<u64>,
    /// The failure's display message (orchestrationFailed, activityFailed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `application`, `infrastructure`, `configuration` or `poison` (failures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_category: Option<&'static str>,
    /// Wall-clock ms since the epoch at which the commit was seen.
    pub at: u64,
}

impl LifecycleEvent {
    fn new(kind: &'static str, instance_id: &str, execution_id: u64) -> Self {
        Self {
            kind,
            instance_id: instance_id.to_string(),
            execution_id,
            name: None,
            version: None,
            parent_instance_id: None,
            activity_id: None,
            error: None,
            error_category: None,
            at: now_ms(),
        }
    }

    fn failed(mut self, details: &duroxide::ErrorDetails) -> Self {
        self.error = Some(details.display_message());
        self.error_category = Some(details.category());
        self
    }
}

/// The lifecycle events of one runtime: whether JS listens, where events go, and the
/// names of activities in flight (by lock token) while it listens.
#[derive(Default)]
pub(crate) struct Lifecycle {
    wanted: AtomicBool,
    sink: Mutex<DiagnosticSink>,
    activity_names: Mutex<HashMap<String, String>>,
}

impl Lifecycle {
    /// JS has (or no longer has) a listener for a lifecycle event.
    pub fn set_wanted(&self, on: bool) {
        self.wanted.store(on, Ordering::Relaxed);
        if !on {
            self.names().clear();
        }
    }

    pub fn set_sink(&self, sink: DiagnosticSink) {
        *self.sink.lock().unwrap_or_else(|p| p.into_inner()) = sink;
    }

    fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    fn names(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.activity_names
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn emit(&self, event: &LifecycleEvent) {
        self.sink
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .emit(event);
    }

    /// The events a turn with these new history events announces once its ack commits
    /// (none while nobody listens).
    pub fn turn_events(&self, delta: &[Event]) -> Vec<LifecycleEvent> {
        if !self.wanted() {
            return Vec::new();
        }
        delta.iter().filter_map(turn_event).collect()
    }

    /// An activity was handed out under `token`.
    pub fn activity_fetched(&self, token: &str, item: &WorkItem) {
        if let (true, WorkItem::ActivityExecute { name, .. }) = (self.wanted(), item) {
            self.names().insert(token.to_string(), name.clone());
        }
    }

    /// The activity under `token` is being acked with `completion` (or abandoned: None):
    /// the event to announce once that commits.
    pub fn activity_ending(
        &self,
        token: &str,
        completion: Option<&WorkItem>,
    ) -> Option<LifecycleEvent> {
        if !self.wanted() {
            return None;
        }
        let name = self.names().remove(token);
        let Some(WorkItem::ActivityFailed {
            instance,
            execution_id,
            id,
            details,
        }) = completion
        else {
            return None;
        };
        let mut e = LifecycleEvent::new("activityFailed", instance, *execution_id).failed(details);
        e.activity_id = Some(*id);
        e.name = name;
        Some(e)
    }

    /// Announce `events` if the write they describe committed.
    pub fn committed<T>(
        &self,
        events: impl IntoIterator<Item = LifecycleEvent>,
        result: &Result<T, duroxide::providers::ProviderError>,
    ) {
        if result.is_ok() {
            for e in events {
                self.emit(&e);
            }
        }
    }
}

/// The lifecycle event a new history event stands for, if any.
fn turn_event(event: &Event) -> Option<LifecycleEvent> {
    let at = |kind| LifecycleEvent::new(kind, &event.instance_id, event.execution_id);
    Some(match &event.kind {
        EventKind::OrchestrationStarted {
            name,
            version,
            parent_instance,
            ..
        } => {
            let mut e = at("orchestrationStarted");
            e.name = Some(name.clone());
            e.version = Some(version.clone());
            e.parent_instance_id = parent_instance.clone();
            e
        }
        EventKind::OrchestrationCompleted { .. } => at("orchestrationCompleted"),
        EventKind::OrchestrationFailed { details } => at("orchestrationFailed").failed(details),
        EventKind::OrchestrationContinuedAsNew { .. } => at("orchestrationContinuedAsNew"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use duroxide::ErrorDetails;

    fn event(kind: EventKind) -> Event {
        Event::with_event_id(1, "i", 3, None, kind)
    }

    fn started() -> Event {
        event(EventKind::OrchestrationStarted {
            name: "Flow".into(),
            version: "1.2.0".into(),
            input: "null".into(),
            parent_instance: Some("p".into()),
            parent_id: Some(4),
            parent_execution_id: None,
            carry_forward_events: None,
            initial_custom_status: None,
        })
    }

    #[test]
    fn nothing_is_read_while_nobody_listens() {
        let l = Lifecycle::default();
        assert!(l.turn_events(&[started()]).is_empty());
        l.set_wanted(true);
        l.activity_fetched("t", &activity("Work"));
        l.set_wanted(false);
        l.set_wanted(true);
        let failed = l.activity_ending("t", Some(&failure()));
        assert_eq!(
            failed.and_then(|e| e.name),
            None,
            "names are forgotten when turned off"
        );
    }

    #[test]
    fn turn_events_name_what_the_history_says() {
        let l = Lifecycle::default();
        l.set_wanted(true);
        let completed = event(EventKind::OrchestrationCompleted { output: "1".into() });
        let events = l.turn_events(&[started(), completed]);
        assert_eq!(
            events.iter().map(|e| e.kind).collect::<Vec<_>>(),
            ["orchestrationStarted", "orchestrationCompleted"]
        );
        assert_eq!(events[0].name.as_deref(), Some("Flow"));
        assert_eq!(events[0].parent_instance_id.as_deref(), Some("p"));
        assert_eq!(events[0].execution_id, 3);
        l.activity_fetched("t", &activity("Work"));
        let failed = l.activity_ending("t", Some(&failure())).unwrap();
        assert_eq!(
            (failed.kind, failed.name.as_deref(), failed.activity_id),
            ("activityFailed", Some("Work"), Some(7))
        );
        assert_eq!(failed.error_category, Some("application"));
    }

    fn activity(name: &str) -> WorkItem {
        WorkItem::ActivityExecute {
            instance: "i".into(),
            execution_id: 3,
            id: 7,
            name: name.into(),
            input: "null".into(),
            session_id: None,
            tag: None,
        }
    }

    fn failure() -> WorkItem {
        WorkItem::ActivityFailed {
            instance: "i".into(),
            execution_id: 3,
            id: 7,
            details: ErrorDetails::Application {
                kind: duroxide::AppErrorKind::ActivityFailed,
                message: "no".into(),
                retryable: false,
            },
        }
    }
}
