//! Steps of time, the client and the admin.

use crate::state::{Execution, Kind, State};

/// The lease runs out. Under a dispatcher still holding it this is a fault (a slow turn,
/// a clock jump); a lease nobody holds any more just runs out.
pub fn expire_lease(s: &mut State, i: u8) {
    let Some(lease) = s.instance(i).lease() else {
        return;
    };
    if s.token_held(lease.token) {
        s.spend_fault();
    }
    if let Some(row) = &mut s.instance_mut(i).row
        && let Some(l) = &mut row.lease
    {
        l.live = false;
    }
}

pub fn enqueue_event(s: &mut State, i: u8) {
    s.budgets.events -= 1;
    s.enqueue(i, Kind::Event);
}

pub fn start_instance(s: &mut State, i: u8) {
    s.budgets.starts -= 1;
    s.enqueue(i, Kind::Start);
}

/// `admin_delete_instances.sql`: all rows of the instance but its dead letters. The id's
/// next start is a new incarnation.
pub fn delete_instance(s: &mut State, i: u8) {
    s.budgets.deletes -= 1;
    let inst = s.instance_mut(i);
    inst.messages.clear();
    inst.row = None;
    inst.execution = Execution::NoRow;
    inst.generation += 1;
}

pub fn requeue_dead_letter(s: &mut State, index: usize) {
    s.budgets.requeues -= 1;
    let letter = s.dead_letters.remove(index);
    s.enqueue(letter.instance, letter.kind);
}

/// `functions/sweep_orphans.sql` for one instance whose waiting messages' timeout passed.
pub fn sweep_orphans(s: &mut State, i: u8) {
    let inst = s.instance_mut(i);
    if inst.runnable() {
        for m in &mut inst.messages {
            m.waiting = false;
        }
        return;
    }
    let mut orphans = Vec::new();
    inst.messages.retain(|m| {
        let orphan = m.waiting && m.token.is_none();
        if orphan {
            orphans.push(m.kind);
        }
        !orphan
    });
    if inst.messages.is_empty() {
        inst.row = None;
    }
    for kind in orphans {
        s.dead_letter(i, kind);
    }
}
