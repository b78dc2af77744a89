//! History events as the client returns them (`client.readExecutionHistory`).
//!
//! `kind` is the duroxide `EventKind` variant name and `data` the payload as JSON text, in
//! the shapes duroxide-node uses. Unlike duroxide-node, payload strings are never spliced
//! into the JSON unescaped: a payload that is JSON text is embedded as that value, anything
//! else as a JSON string, so `data` always parses.

use duroxide::{Event, EventKind};
use napi_derive::napi;
use serde_json::{Value, json};

/// One history event.
#[napi(object)]
pub struct NativeEvent {
    pub event_id: f64,
    /// `EventKind` variant name, e.g. `ActivityScheduled`.
    pub kind: String,
    /// The event this one completes (e.g. the `ActivityScheduled` of an `ActivityCompleted`).
    pub source_event_id: Option<f64>,
    /// ms since the epoch
    pub timestamp_ms: f64,
    /// The payload as JSON text; absent for kinds without one.
    pub data: Option<String>,
}

/// A payload string as a JSON value: itself when it is JSON text, else a JSON string.
fn payload(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Variant name and payload of one event kind.
fn describe(kind: &EventKind) -> (&'static str, Option<Value>) {
    match kind {
        EventKind::OrchestrationStarted {
            name,
            version,
            input,
            ..
        } => (
            "OrchestrationStarted",
            Some(json!({ "name": name, "version": version, "input": payload(input) })),
        ),
        EventKind::OrchestrationCompleted { output } => {
            ("OrchestrationCompleted", Some(payload(output)))
        }
        EventKind::OrchestrationFailed { details } => {
            ("OrchestrationFailed", serde_json::to_value(details).ok())
        }
        EventKind::ActivityScheduled { name, input, .. } => (
            "ActivityScheduled",
            Some(json!({ "name": name, "input": payload(input) })),
        ),
        EventKind::ActivityCompleted { result } => ("ActivityCompleted", Some(payload(result))),
        EventKind::ActivityFailed { details } => {
            ("ActivityFailed", serde_json::to_value(details).ok())
        }
        EventKind::ActivityCancelRequested { reason } => {
            ("ActivityCancelRequested", Some(json!({ "reason": reason })))
        }
        EventKind::TimerCreated { fire_at_ms } => {
            ("TimerCreated", Some(json!({ "fireAtMs": fire_at_ms })))
        }
        EventKind::TimerFired { fire_at_ms } => {
            ("TimerFired", Some(json!({ "fireAtMs": fire_at_ms })))
        }
        EventKind::ExternalSubscribed { name } => {
            ("ExternalSubscribed", Some(json!({ "name": name })))
        }
        EventKind::ExternalEvent { name, data } => (
            "ExternalEvent",
            Some(json!({ "name": name, "data": payload(data) })),
        ),
        EventKind::OrchestrationChained {
            name,
            instance,
            input,
        } => (
            "OrchestrationChained",
            Some(json!({ "name": name, "instance": instance, "input": payload(input) })),
        ),
        EventKind::SubOrchestrationScheduled {
            name,
            instance,
            input,
        } => (
            "SubOrchestrationScheduled",
            Some(json!({ "name": name, "instance": instance, "input": payload(input) })),
        ),
        EventKind::SubOrchestrationCompleted { result } => {
            ("SubOrchestrationCompleted", Some(payload(result)))
        }
        EventKind::SubOrchestrationFailed { details } => {
            ("SubOrchestrationFailed", serde_json::to_value(details).ok())
        }
        EventKind::SubOrchestrationCancelRequested { reason } => (
            "SubOrchestrationCancelRequested",
            Some(json!({ "reason": reason })),
        ),
        EventKind::OrchestrationContinuedAsNew { input } => (
            "OrchestrationContinuedAsNew",
            Some(json!({ "input": payload(input) })),
        ),
        EventKind::OrchestrationCancelRequested { reason } => (
            "OrchestrationCancelRequested",
            Some(json!({ "reason": reason })),
        ),
        EventKind::ExternalSubscribedCancelled { reason } => (
            "ExternalSubscribedCancelled",
            Some(json!({ "reason": reason })),
        ),
        EventKind::QueueSubscribed { name } => ("QueueSubscribed", Some(json!({ "name": name }))),
        EventKind::QueueEventDelivered { name, data } => (
            "QueueEventDelivered",
            Some(json!({ "name": name, "data": payload(data) })),
        ),
        EventKind::QueueSubscriptionCancelled { reason } => (
            "QueueSubscriptionCancelled",
            Some(json!({ "reason": reason })),
        ),
        EventKind::CustomStatusUpdated { status } => {
            ("CustomStatusUpdated", Some(json!({ "status": status })))
        }
        EventKind::KeyValueSet { key, value, .. } => {
            ("KeyValueSet", Some(json!({ "key": key, "value": value })))
        }
        EventKind::KeyValueCleared { key } => ("KeyValueCleared", Some(json!({ "key": key }))),
        EventKind::KeyValuesCleared => ("KeyValuesCleared", None),
    }
}

pub(crate) fn event_to_js(e: Event) -> NativeEvent {
    let (kind, data) = describe(&e.kind);
    NativeEvent {
        event_id: e.event_id as f64,
        kind: kind.to_string(),
        source_event_id: e.source_event_id.map(|v| v as f64),
        timestamp_ms: e.timestamp_ms as f64,
        data: data.map(|v| v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind) -> NativeEvent {
        event_to_js(Event::with_event_id(3, "i", 1, Some(2), kind))
    }

    #[test]
    fn payloads_are_always_valid_json() {
        let e = event(EventKind::ActivityScheduled {
            name: "A".into(),
            input: "not json \"quoted\"".into(),
            session_id: None,
            tag: None,
        });
        assert_eq!(e.kind, "ActivityScheduled");
        assert_eq!(e.event_id, 3.0);
        assert_eq!(e.source_event_id, Some(2.0));
        let v: Value = serde_json::from_str(e.data.as_deref().unwrap()).unwrap();
        assert_eq!(v, json!({ "name": "A", "input": "not json \"quoted\"" }));

        let e = event(EventKind::ActivityCompleted {
            result: r#"{"a":[1,2]}"#.into(),
        });
        let v: Value = serde_json::from_str(e.data.as_deref().unwrap()).unwrap();
        assert_eq!(v, json!({ "a": [1, 2] }));

        let e = event(EventKind::TimerFired { fire_at_ms: 42 });
        assert_eq!(e.data.as_deref(), Some(r#"{"fireAtMs":42}"#));
        assert!(event(EventKind::KeyValuesCleared).data.is_none());
        assert_eq!(
            event(EventKind::QueueSubscribed { name: "q".into() }).kind,
            "QueueSubscribed"
        );
    }
}
