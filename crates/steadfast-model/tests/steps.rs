//! Single steps against what their SQL does, on short hand-written runs.

mod common;

use steadfast_model::state::{Execution, Kind};
use steadfast_model::{Action, CeilingProtocol, ClaimModel, ModelConfig};

use common::{CLAIM0, REDELIVERED};

const EXPIRE0: Action = Action::ExpireLease { instance: 0 };

fn one_instance(max_attempts: u8) -> ModelConfig {
    let mut cfg = ModelConfig::ci(max_attempts);
    cfg.instances = 1;
    cfg.started = 1;
    cfg
}

#[test]
fn an_ack_needs_the_tokens_live_lease() {
    let cfg = one_instance(1);
    let ack = Action::AckTurn {
        dispatcher: 0,
        complete: true,
    };
    // 'expired': nothing written, the message stays.
    let s = common::replay("ack after expiry", cfg.clone(), &[CLAIM0, EXPIRE0, ack]);
    assert_eq!(s.instance(0).execution, Execution::NoRow);
    assert_eq!(s.instance(0).messages.len(), 1);
    // 'ok': the claimed messages go, the turn is written, the lease released.
    let s = common::replay("ack with a live lease", cfg, &[CLAIM0, ack]);
    assert_eq!(s.instance(0).execution, Execution::Completed);
    assert!(s.instance(0).messages.is_empty() && s.instance(0).lease().is_none());
}

#[test]
fn give_back_returns_the_attempt_and_abandon_keeps_it() {
    let cfg = one_instance(1);
    let s = common::replay(
        "give back",
        cfg.clone(),
        &[CLAIM0, Action::GiveBack { dispatcher: 0 }],
    );
    assert_eq!(s.instance(0).messages[0].attempts, 0);
    assert!(s.instance(0).lease().is_none());
    let s = common::replay("abandon", cfg, &[CLAIM0, Action::Abandon { dispatcher: 0 }]);
    assert_eq!(s.instance(0).messages[0].attempts, 1);
    assert!(s.instance(0).lease().is_none());
}

#[test]
fn a_refused_renewal_ends_the_turn() {
    let renew = Action::RenewLease { dispatcher: 0 };
    let s = common::replay("renewal", one_instance(1), &[CLAIM0, renew, EXPIRE0, renew]);
    assert!(s.first_idle() == Some(0) && s.instance(0).lease().is_some());
}

#[test]
fn the_new_ceiling_fails_the_instance_inside_the_claim() {
    let model = ClaimModel::new(one_instance(1));
    let crash = Action::Crash { dispatcher: 0 };
    let s = common::replay(
        "ceiling",
        one_instance(1),
        &[&REDELIVERED[..], &[crash, EXPIRE0]].concat(),
    );
    // Attempt 2 = M + 1 was handed out: no third claim, the ceiling instead.
    assert!(model.step(&s, CLAIM0).is_none());
    let s = model
        .step(&s, Action::FailAtCeiling { instance: 0 })
        .expect("the ceiling is due");
    assert_eq!(s.instance(0).execution, Execution::Failed);
    assert!(s.instance(0).messages.is_empty() && s.instance(0).lease().is_none());
    assert_eq!(s.dead_letters.len(), 1);
    // A requeue puts it back with a fresh attempt budget.
    let s = model
        .step(&s, Action::RequeueDeadLetter { index: 0 })
        .expect("a dead letter to requeue");
    assert_eq!(s.instance(0).messages[0].attempts, 0);
}

#[test]
fn the_old_ceiling_settles_in_a_second_transaction() {
    let cfg = one_instance(1).with_ceiling(CeilingProtocol::AfterClaim);
    let settle = [
        Action::Crash { dispatcher: 0 },
        EXPIRE0,
        CLAIM0,
        Action::EnforceCeilingAfterClaim { dispatcher: 0 },
    ];
    let s = common::replay("old ceiling", cfg, &[&REDELIVERED[..], &settle].concat());
    assert_eq!(s.instance(0).execution, Execution::Failed);
    assert_eq!(s.dead_letters.len(), 1);
}

#[test]
fn a_message_to_an_unstarted_id_waits_then_is_orphaned() {
    let mut cfg = one_instance(1);
    cfg.started = 0;
    let s = common::replay(
        "orphan",
        cfg.clone(),
        &[
            Action::EnqueueEvent { instance: 0 },
            Action::SweepOrphans { instance: 0 },
        ],
    );
    assert!(s.instance(0).row.is_none() && s.instance(0).messages.is_empty());
    assert_eq!(s.dead_letters[0].kind, Kind::Event);
    // A start within the timeout takes the waiting event along in its first claim.
    let s = common::replay(
        "start after event",
        cfg,
        &[
            Action::EnqueueEvent { instance: 0 },
            Action::StartInstance { instance: 0 },
            CLAIM0,
        ],
    );
    assert!(
        s.instance(0)
            .messages
            .iter()
            .all(|m| m.attempts == 1 && !m.waiting)
    );
}

#[test]
fn deletion_invalidates_tokens_and_a_start_begins_a_new_incarnation() {
    let cfg = one_instance(1);
    let s = common::replay(
        "delete",
        cfg,
        &[
            CLAIM0,
            Action::DeleteInstance { instance: 0 },
            Action::StartInstance { instance: 0 },
        ],
    );
    // The ordinary claim's token is gone with the lease row: its dispatcher is idle.
    assert_eq!(s.first_idle(), Some(0));
    assert_eq!(s.instance(0).generation, 1);
    assert!(s.instance(0).messages.iter().all(|m| m.attempts == 0));
}
