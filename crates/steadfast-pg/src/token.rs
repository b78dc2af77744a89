//! Lock tokens. An orchestrator token names the instance and the generation (incarnation,
//! the baseline migration) it was claimed for, so that a poison disposition can still be committed
//! after the lease behind the token has died, and so that anything carrying a token of an
//! older incarnation is recognised and refused. Formats:
//! - `sf2.<random>.<generation>.<hex(instance id)>`: orchestrator claims (built by
//!   `claim_orchestration`);
//! - `sf1.<random>.<hex(instance id)>`: orchestrator claims of builds before generations
//!   (no generation), and worker claims of builds before schema version 5 (empty instance);
//! - `sfw.<random>.<worker_queue id>`: worker claims (the claim appends the id).
//!
//! The database finds a token's row from what the token names (`functions/token_instance.sql`,
//! `functions/token_work_item.sql`), so no index on a lock token is needed.

use rand::Rng;

/// The start of a worker-queue token; the claim appends the id of the row it takes.
pub(crate) fn new_worker_token_prefix() -> String {
    format!("sfw.{}.", new_nonce())
}

/// The random middle part of a token. The orchestrator claim passes it to the database,
/// which only learns there which instance (and generation) the token is for.
pub(crate) fn new_nonce() -> String {
    let nonce: u128 = rand::thread_rng().r#gen();
    format!("{nonce:032x}")
}

/// What an orchestrator token says about the claim it was issued for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Issued {
    pub instance: String,
    /// `None` for tokens of builds before generations.
    pub generation: Option<i64>,
}

/// The instance (and generation) a token was issued for, if it is one of ours.
pub(crate) fn issued(token: &str) -> Option<Issued> {
    let mut parts = token.splitn(4, '.');
    let version = parts.next()?;
    if parts.next()?.len() != 32 {
        return None;
    }
    let (generation, hex) = match version {
        "sf1" => (None, parts.next()?),
        "sf2" => {
            let generation = parts.next()?;
            if generation.is_empty() || !generation.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (Some(generation.parse().ok()?), parts.next()?)
        }
        _ => return None,
    };
    if version == "sf1" && parts.next().is_some() {
        // splitn(4) left a fourth part: the hex itself contained no dot, so this is not ours.
        return None;
    }
    Some(Issued {
        instance: decode_hex(hex)?,
        generation,
    })
}

/// The instance a token was issued for, if it is one of ours.
pub(crate) fn token_instance(token: &str) -> Option<String> {
    issued(token).map(|i| i.instance)
}

fn decode_hex(hex: &str) -> Option<String> {
    if !hex.len().is_multiple_of(2) {
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

    fn hex(id: &str) -> String {
        id.bytes().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn round_trips_any_instance_id_and_generation() {
        for id in ["a", "order-123", "with.dots.and spaces", "ünïcödé/🚀", ""] {
            let v2 = format!("sf2.{}.42.{}", new_nonce(), hex(id));
            assert_eq!(
                issued(&v2),
                Some(Issued {
                    instance: id.into(),
                    generation: Some(42)
                })
            );
            let v1 = format!("sf1.{}.{}", new_nonce(), hex(id));
            assert_eq!(token_instance(&v1).as_deref(), Some(id));
            assert_eq!(issued(&v1).unwrap().generation, None);
        }
        assert_ne!(new_worker_token_prefix(), new_worker_token_prefix());
        assert_eq!(issued(&format!("{}12", new_worker_token_prefix())), None);
    }

    #[test]
    fn rejects_foreign_tokens() {
        let nonce = "0".repeat(32);
        for t in [
            String::new(),
            "lock_abc".into(),
            "sf1.short.61".into(),
            format!("sf3.{nonce}.61"),
            format!("sf1.{nonce}.6"),
            format!("sf1.{nonce}.61.62"),
            format!("sf2.{nonce}.61"),
            format!("sf2.{nonce}.x1.61"),
            format!("sf2.{nonce}..61"),
            format!("sf2.{nonce}.-1.61"),
        ] {
            assert_eq!(issued(&t), None, "{t}");
        }
    }
}
