//! Symmetry reduction. Dispatchers are interchangeable, tokens and message ids are only
//! compared for equality, and every step treats instance ids alike, so states that differ
//! by a permutation of dispatchers or instance ids, or a renaming of tokens or message
//! ids, behave alike (and every property treats them alike). The representative renames
//! tokens and ids in order of first appearance, sorts the dispatchers, and takes the
//! least such form over all permutations of the instance ids.

use stateright::Representative;

use crate::state::{Dispatcher, MessageSet, State};

/// A renaming of small values in order of first appearance.
struct Renaming {
    to: [Option<u8>; 64],
    next: u8,
}

impl Renaming {
    fn new() -> Self {
        Self {
            to: [None; 64],
            next: 0,
        }
    }

    fn map(&mut self, from: u8) -> u8 {
        *self.to[from as usize].get_or_insert_with(|| {
            self.next += 1;
            self.next - 1
        })
    }

    fn map_set(&mut self, set: MessageSet) -> MessageSet {
        let mut out = 0;
        for bit in 0..MessageSet::BITS as u8 {
            if set & (1 << bit) != 0 {
                out |= 1 << self.map(bit);
            }
        }
        out
    }
}

/// Renames tokens and message ids (rows first, then dispatchers in their current order).
fn rename(s: &mut State) {
    let mut tokens = Renaming::new();
    let mut ids = Renaming::new();
    for inst in &mut s.instances {
        if let Some(row) = &mut inst.row
            && let Some(lease) = &mut row.lease
        {
            lease.token = tokens.map(lease.token);
        }
        for m in &mut inst.messages {
            m.id = ids.map(m.id);
            m.token = m.token.map(|t| tokens.map(t));
        }
        inst.messages.sort();
    }
    for d in &mut s.dispatchers {
        if let Dispatcher::Holding(c) | Dispatcher::Settling(c) = d {
            c.token = tokens.map(c.token);
            c.batch = ids.map_set(c.batch);
        }
    }
    s.ghost.committed = ids.map_set(s.ghost.committed);
}

/// Tokens and message ids renamed, dispatchers sorted (rename, sort, and rename again so
/// that the names dispatchers introduce follow the sorted order).
fn canonical_names(mut s: State) -> State {
    rename(&mut s);
    s.dispatchers.sort();
    rename(&mut s);
    s.dispatchers.sort();
    s
}

/// `s` with instance id `i` renamed `to[i]`.
fn permute_instances(s: &State, to: &[u8]) -> State {
    let mut from = vec![0; to.len()];
    for (i, j) in to.iter().enumerate() {
        from[*j as usize] = i;
    }
    let mut out = State {
        instances: from.iter().map(|i| s.instances[*i].clone()).collect(),
        dispatchers: s.dispatchers.clone(),
        dead_letters: s.dead_letters.clone(),
        budgets: s.budgets,
        ghost: s.ghost,
    };
    for d in &mut out.dispatchers {
        if let Dispatcher::Holding(c) | Dispatcher::Settling(c) = d {
            c.instance = to[c.instance as usize];
        }
    }
    for letter in &mut out.dead_letters {
        letter.instance = to[letter.instance as usize];
    }
    out.dead_letters.sort();
    out
}

/// Every permutation of `0..n`.
fn permutations(n: usize) -> Vec<Vec<u8>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for shorter in permutations(n - 1) {
        for at in 0..n {
            let mut p = shorter.clone();
            p.insert(at, (n - 1) as u8);
            out.push(p);
        }
    }
    out
}

impl State {
    /// The representative up to dispatchers, tokens and message ids, instance ids kept
    /// (for checks that follow one instance id along a run).
    pub fn representative_keeping_ids(&self) -> Self {
        canonical_names(self.clone())
    }
}

impl Representative for State {
    fn representative(&self) -> Self {
        permutations(self.instances.len())
            .iter()
            .map(|p| canonical_names(permute_instances(self, p)))
            .min()
            .expect("at least the identity permutation")
    }
}
