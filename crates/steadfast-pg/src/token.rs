//! Lock tokens. A token names the instance it was claimed for, so that a poison
//! disposition can still be committed after the lease behind the token has died, keyed
//! on (instance, execution, attempt count) — the execution comes with the ack and the
//! attempt count with the poison details. Format: `sf1.<random>.<hex(instance id)>`.

use rand::Rng;

pub(crate) fn new_token(instance_id: &str) -> String {
    let hex: String = instance_id.bytes().map(|b| format!("{b:02x}")).collect();
    format!("sf1.{}.{hex}", new_nonce())
}

/// The random middle part of a token. The orchestrator claim passes it to the database,
/// which only learns there which instance the token is for (`claim_orchestration`).
pub(crate) fn new_nonce() -> String {
    let nonce: u128 = rand::thread_rng().r#gen();
    format!("{nonce:032x}")
}

/// The instance a token was issued for, if it is one of ours.
pub(crate) fn token_instance(token: &str) -> Option<String> {
    let mut parts = token.splitn(3, '.');
    if parts.next()? != "sf1" || parts.next()?.len() != 32 {
        return None;
    }
    let hex = parts.next()?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_any_instance_id() {
        for id in ["a", "order-123", "with.dots.and spaces", "ünïcödé/🚀", ""] {
            assert_eq!(token_instance(&new_token(id)).as_deref(), Some(id));
        }
        assert_ne!(new_token("x"), new_token("x"));
    }

    #[test]
    fn rejects_foreign_tokens() {
        for t in [
            "",
            "lock_abc",
            "sf1.short.61",
            "sf2.00000000000000000000000000000000.61",
            "sf1.00000000000000000000000000000000.6",
        ] {
            assert_eq!(token_instance(t), None, "{t}");
        }
    }
}
