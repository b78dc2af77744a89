//! The generation fence: whether an operation carrying an orchestrator lock token still
//! speaks for the instance's latest claim. Tokens carry the generation of the lease row
//! they were issued on (the baseline migration); a re-created instance has a new row and a new
//! generation, and every claim a new token. So a token that is not the lease's current
//! one comes from a claim that was released, superseded, or made on an older incarnation,
//! and its dispositions are refused. This is the one place that says which; a poison
//! disposition checks the incarnation first, then its execution, then its claim.

use crate::token::Issued;

/// An instance's lease row as the fence needs it.
pub(crate) struct LeaseSnapshot {
    pub token: Option<String>,
    pub generation: i64,
}

/// Why a token issued as `issued` is not of the incarnation whose lease row is `lease`
/// (`None`: no row, the instance was deleted); `None` when it is.
pub(crate) fn incarnation_refusal(
    issued: &Issued,
    lease: Option<&LeaseSnapshot>,
) -> Option<String> {
    let Some(lease) = lease else {
        return Some("the instance was deleted".into());
    };
    match issued.generation {
        Some(g) if g != lease.generation => Some(format!(
            "the instance was deleted and re-created: the token is of generation {g}, the instance is now at generation {}",
            lease.generation
        )),
        _ => None,
    }
}

/// Why `token` is no longer the claim `lease` belongs to (released, or taken over by a
/// newer claim); `None` while it is.
pub(crate) fn claim_refusal(token: &str, lease: &LeaseSnapshot) -> Option<String> {
    match lease.token.as_deref() {
        Some(t) if t == token => None,
        Some(_) => Some("a newer claim took the instance over".into()),
        None => Some("the claim's lease was released (acked, abandoned or given back)".into()),
    }
}

/// Why a token was refused when the reason is an older incarnation, for the refusal's
/// diagnostic; `None` when the token is of the current generation (or predates them).
pub(crate) fn older_incarnation(issued: &Issued, current: Option<i64>) -> Option<String> {
    match (issued.generation, current) {
        (Some(g), Some(now)) if g != now => Some(format!(
            "the token is of an older incarnation of the instance (generation {g}; now {now})"
        )),
        (Some(g), None) => Some(format!(
            "the token is of generation {g} of an instance that was deleted"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issued(generation: Option<i64>) -> Issued {
        Issued {
            instance: "i".into(),
            generation,
        }
    }

    fn lease(token: Option<&str>, generation: i64) -> LeaseSnapshot {
        LeaseSnapshot {
            token: token.map(str::to_string),
            generation,
        }
    }

    #[test]
    fn only_the_current_claim_of_the_current_generation_speaks_for_the_instance() {
        let current = lease(Some("t"), 3);
        assert_eq!(incarnation_refusal(&issued(Some(3)), Some(&current)), None);
        assert_eq!(incarnation_refusal(&issued(None), Some(&current)), None);
        assert_eq!(claim_refusal("t", &current), None);
        let deleted = incarnation_refusal(&issued(Some(3)), None).unwrap();
        assert!(deleted.contains("deleted"), "{deleted}");
        let recreated = incarnation_refusal(&issued(Some(3)), Some(&lease(Some("t"), 4)));
        assert!(recreated.unwrap().contains("re-created"));
        let newer = claim_refusal("t", &lease(Some("u"), 3)).unwrap();
        assert!(newer.contains("newer claim"), "{newer}");
        let released = claim_refusal("t", &lease(None, 3)).unwrap();
        assert!(released.contains("released"), "{released}");
    }

    #[test]
    fn older_incarnations_are_named() {
        assert!(
            older_incarnation(&issued(Some(1)), Some(2))
                .unwrap()
                .contains("older")
        );
        assert!(
            older_incarnation(&issued(Some(1)), None)
                .unwrap()
                .contains("deleted")
        );
        assert_eq!(older_incarnation(&issued(Some(2)), Some(2)), None);
        assert_eq!(older_incarnation(&issued(None), Some(2)), None);
    }
}
