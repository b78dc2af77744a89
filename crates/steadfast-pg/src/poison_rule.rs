//! The one rule for what a poison disposition is, for every layer that has to recognise one
//! (this provider's acks, and the Node runtime's poison reports on other providers).
//!
//! duroxide disposes of a message that reached its attempt ceiling by failing it with
//! `ErrorDetails::Poison`: an orchestration turn's `OrchestrationFailed` for orchestrator
//! messages, an `ActivityFailed` completion for an activity's work item. An orchestration
//! that fails *because* its activity was poisoned carries the activity's poison details too;
//! that is an ordinary failure, not a disposition of the turn's own messages.

use duroxide::providers::WorkItem;
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};

/// The poison details of a turn that disposes of its own (orchestrator) messages as poison.
pub fn orchestration_turn_poison(history_delta: &[Event]) -> Option<&ErrorDetails> {
    history_delta.iter().find_map(|e| match &e.kind {
        EventKind::OrchestrationFailed { details } if is_poison_of(details, false) => Some(details),
        _ => None,
    })
}

/// The poison details of an activity completion that disposes of its work item as poison.
pub fn activity_completion_poison(completion: &WorkItem) -> Option<&ErrorDetails> {
    match completion {
        WorkItem::ActivityFailed { details, .. } if is_poison_of(details, true) => Some(details),
        _ => None,
    }
}

fn is_poison_of(details: &ErrorDetails, activity: bool) -> bool {
    matches!(details, ErrorDetails::Poison { message_type, .. }
        if matches!(message_type, PoisonMessageType::Activity { .. }) == activity)
}
