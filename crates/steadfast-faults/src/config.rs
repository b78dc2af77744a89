//! `fault-worker` settings: `--key value` arguments, each with an environment fallback
//! `FAULT_WORKER_<KEY>` (upper case, `-` as `_`). The database URL defaults to
//! `STEADFAST_TEST_DATABASE_URL`.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, bail};
use steadfast_pg::{PollingMode, ProviderOptions};

use crate::workload::Pace;

#[derive(Clone, Debug)]
pub struct WorkerConfig {
    pub database_url: String,
    pub schema: String,
    pub polling: PollingMode,
    pub pool: u32,
    pub acquire_timeout: Duration,
    pub lock_timeout: Duration,
    pub max_attempts: u32,
    pub orchestration_concurrency: usize,
    pub worker_concurrency: usize,
    pub orchestrator_lock: Duration,
    pub worker_lock: Duration,
    pub pace: Pace,
}

const KEYS: &[&str] = &[
    "url",
    "schema",
    "polling",
    "pool",
    "acquire-timeout-ms",
    "lock-timeout-ms",
    "max-attempts",
    "orchestration-concurrency",
    "worker-concurrency",
    "orchestrator-lock-ms",
    "worker-lock-ms",
    "step-ms",
    "long-step-ms",
    "turn-pause-ms",
    "timer-ms",
];

pub const USAGE: &str = "\
usage: fault-worker --schema NAME [--url URL] [--polling listen|session-free] [--pool N]
                    [--acquire-timeout-ms MS] [--lock-timeout-ms MS] [--max-attempts N]
                    [--orchestration-concurrency N] [--worker-concurrency N]
                    [--orchestrator-lock-ms MS] [--worker-lock-ms MS]
                    [--step-ms MS] [--long-step-ms MS] [--turn-pause-ms MS] [--timer-ms MS]
Every option also reads FAULT_WORKER_<OPTION> (e.g. FAULT_WORKER_SCHEMA); the URL defaults
to STEADFAST_TEST_DATABASE_URL. Runs until killed, or until stdin says `stop` or closes.";

impl WorkerConfig {
    pub fn parse(args: impl IntoIterator<Item = String>) -> anyhow::Result<Self> {
        let mut given = HashMap::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(key) = arg.strip_prefix("--") else {
                bail!("unexpected argument `{arg}`");
            };
            let (key, value) = match key.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => {
                    let v = args
                        .next()
                        .with_context(|| format!("--{key} needs a value"))?;
                    (key.to_string(), v)
                }
            };
            if !KEYS.contains(&key.as_str()) {
                bail!("unknown option --{key}");
            }
            given.insert(key, value);
        }
        let get = |key: &str| -> Option<String> {
            given.get(key).cloned().or_else(|| {
                std::env::var(format!(
                    "FAULT_WORKER_{}",
                    key.to_uppercase().replace('-', "_")
                ))
                .ok()
            })
        };
        let number = |key: &str, default: u64| -> anyhow::Result<u64> {
            match get(key) {
                None => Ok(default),
                Some(v) => v
                    .parse()
                    .with_context(|| format!("--{key} must be a whole number (got `{v}`)")),
            }
        };
        let ms = |key: &str, default: u64| number(key, default).map(Duration::from_millis);
        let database_url = get("url")
            .or_else(|| std::env::var("STEADFAST_TEST_DATABASE_URL").ok())
            .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into());
        let schema = get("schema").context("--schema is required")?;
        let polling = match get("polling").as_deref() {
            None | Some("listen") => PollingMode::Listen,
            Some("session-free") => PollingMode::SessionFree,
            Some(other) => bail!("--polling must be listen or session-free (got `{other}`)"),
        };
        Ok(Self {
            database_url,
            schema,
            polling,
            pool: number("pool", 4)? as u32,
            acquire_timeout: ms("acquire-timeout-ms", 2_000)?,
            lock_timeout: ms("lock-timeout-ms", 2_000)?,
            max_attempts: number("max-attempts", 5)? as u32,
            orchestration_concurrency: number("orchestration-concurrency", 2)? as usize,
            worker_concurrency: number("worker-concurrency", 3)? as usize,
            orchestrator_lock: ms("orchestrator-lock-ms", 3_000)?,
            worker_lock: ms("worker-lock-ms", 3_000)?,
            pace: Pace {
                step: ms("step-ms", 300)?,
                long_step: ms("long-step-ms", 2_500)?,
                turn_pause: ms("turn-pause-ms", 400)?,
                timer: ms("timer-ms", 500)?,
            },
        })
    }

    /// Provider options: the attempt ceiling inside the claim is the runtime's `max_attempts`.
    pub fn provider_options(&self) -> ProviderOptions {
        let mut o = ProviderOptions::new(self.database_url.clone()).with_schema(&self.schema);
        o.polling = self.polling;
        o.max_connections = self.pool;
        o.acquire_timeout = self.acquire_timeout;
        o.statement_lock_timeout = self.lock_timeout;
        o.claim.max_attempts = Some(self.max_attempts);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<WorkerConfig> {
        WorkerConfig::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn reads_options_in_both_spellings() {
        let c = parse(&["--schema", "s1", "--pool=2", "--polling", "session-free"]).unwrap();
        assert_eq!(c.schema, "s1");
        assert_eq!(c.pool, 2);
        assert_eq!(c.polling, PollingMode::SessionFree);
        assert_eq!(c.provider_options().claim.max_attempts, Some(5));
    }

    #[test]
    fn rejects_bad_options_naming_them() {
        let e = parse(&["--schema", "s", "--pool", "many"]).unwrap_err();
        assert!(format!("{e:#}").contains("--pool"), "{e:#}");
        let e = parse(&["--schema", "s", "--bogus", "1"]).unwrap_err();
        assert!(format!("{e:#}").contains("--bogus"), "{e:#}");
        let e = parse(&["--schema", "s", "--polling", "sometimes"]).unwrap_err();
        assert!(format!("{e:#}").contains("--polling"), "{e:#}");
    }
}
