//! steadfast example app.
//!
//! Runs two orchestrations on the duroxide runtime and reports how they ended:
//!
//! * `OnboardCustomer` calls `ValidateEmail` and `CreateAccount`, waits on a 1 s
//!   durable timer, waits for the external event `Approved` (raised by this program
//!   through `Client::raise_event` once the orchestration is waiting), then calls
//!   `SendWelcome`. Expected: Completed.
//! * `FlakyImport` schedules an activity that no worker here can run. Every delivery
//!   is abandoned, the attempt count grows, and with `max_attempts: 3` the runtime
//!   marks the message poison and fails the orchestration. Expected: Failed (poison).
//!
//! Exit status: 0 when both ended as expected, 1 when either did not, 2 on a setup
//! or provider error.
//!
//! Storage: PostgreSQL through steadfast-pg when `--database-url URL` is given or
//! `STEADFAST_DATABASE_URL` is set; otherwise duroxide's embedded SQLite provider on
//! a file under `target/steadfast-example/`.

mod workflows;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use duroxide::providers::Provider;
use duroxide::providers::sqlite::SqliteProvider;
use duroxide::runtime::{Runtime, UnregisteredBackoffConfig};
use duroxide::{Client, OrchestrationStatus, RuntimeOptions};
use serde_json::json;

/// PostgreSQL schema the example keeps its tables in.
const PG_SCHEMA: &str = "steadfast_example";

/// Attempts after which the runtime treats a message as poison.
const MAX_ATTEMPTS: u32 = 3;

/// Upper bound for each instance to reach a terminal state.
const WAIT_TIMEOUT: Duration = Duration::from_secs(12);

const USAGE: &str = "\
usage: steadfast-example [--database-url URL]

  --database-url URL   run on PostgreSQL through steadfast-pg
                       (default: $STEADFAST_DATABASE_URL, else embedded SQLite
                       under target/steadfast-example/)
  -h, --help           show this help

Set RUST_LOG=warn to see the runtime's redelivery and poison warnings
(default: errors only).
";

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error")),
        )
        .with_writer(std::io::stderr)
        .init();

    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e:#}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    match run(args).await {
        Ok(true) => {
            println!("result: OK (OnboardCustomer completed, FlakyImport failed as poison)");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("result: FAILED (see the status lines above)");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

struct Args {
    database_url: Option<String>,
}

/// `Ok(None)` means help was asked for.
fn parse_args(mut argv: impl Iterator<Item = String>) -> anyhow::Result<Option<Args>> {
    let mut database_url = None;
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--database-url" => {
                let url = argv.next().context("--database-url needs a value")?;
                database_url = Some(url);
            }
            other => match other.strip_prefix("--database-url=") {
                Some(url) => database_url = Some(url.to_string()),
                None => bail!("unknown argument `{other}`"),
            },
        }
    }
    let database_url = database_url
        .or_else(|| std::env::var("STEADFAST_DATABASE_URL").ok())
        .filter(|url| !url.trim().is_empty());
    Ok(Some(Args { database_url }))
}

async fn open_provider(database_url: Option<&str>) -> anyhow::Result<Arc<dyn Provider>> {
    match database_url {
        Some(url) => {
            println!("provider: PostgreSQL via steadfast-pg (schema {PG_SCHEMA})");
            let provider = Arc::new(
                steadfast_pg::PostgresProvider::connect_with_schema(url, PG_SCHEMA).await?,
            );
            let mut diagnostics = provider.subscribe();
            tokio::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match diagnostics.recv().await {
                        Ok(d) => println!("[diagnostic] {d}"),
                        Err(RecvError::Lagged(n)) => {
                            println!("[diagnostic] ({n} diagnostics dropped: receiver lagged)")
                        }
                        Err(RecvError::Closed) => break,
                    }
                }
            });
            Ok(provider)
        }
        None => {
            let dir =
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/steadfast-example");
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let dir = dir.canonicalize().unwrap_or(dir);
            let path = dir.join("example.db");
            // sqlx does not create a missing SQLite file from a plain `sqlite:` URL.
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            println!("provider: embedded SQLite at {}", path.display());
            let provider = SqliteProvider::new(&format!("sqlite:{}", path.display()), None)
                .await
                .context("opening the SQLite database")?;
            Ok(Arc::new(provider))
        }
    }
}

async fn run(args: Args) -> anyhow::Result<bool> {
    let store = open_provider(args.database_url.as_deref()).await?;

    let options = RuntimeOptions {
        max_attempts: MAX_ATTEMPTS,
        // Redeliver the undeliverable import quickly so the poison path takes
        // about a second instead of the default 1 s + 2 s + 4 s backoff.
        unregistered_backoff: UnregisteredBackoffConfig {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        },
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::start_with_options(
        store.clone(),
        workflows::activities(),
        workflows::orchestrations(),
        options,
    )
    .await;
    println!("runtime: started (max_attempts = {MAX_ATTEMPTS})");

    let outcome = drive(Client::new(store)).await;

    runtime.shutdown(Some(2_000)).await;
    println!("runtime: stopped");
    outcome
}

/// Start both instances, approve the onboarding once it waits, and report.
async fn drive(client: Client) -> anyhow::Result<bool> {
    let run_id = run_id();
    let onboard_id = format!("onboard-{run_id}");
    let flaky_id = format!("flaky-import-{run_id}");

    let customer = json!({
        "customer_id": format!("c{run_id}"),
        "name": "Ada Lovelace",
        "email": "Ada@Example.org",
    });
    client
        .start_orchestration(
            &onboard_id,
            workflows::ONBOARD_CUSTOMER,
            customer.to_string(),
        )
        .await
        .context("starting OnboardCustomer")?;
    println!(
        "client: started {onboard_id} ({})",
        workflows::ONBOARD_CUSTOMER
    );

    client
        .start_orchestration(
            &flaky_id,
            workflows::FLAKY_IMPORT,
            format!("batch-{run_id}"),
        )
        .await
        .context("starting FlakyImport")?;
    println!(
        "client: started {flaky_id} ({}); no worker here handles {}, so expect it to be \
         redelivered and then poisoned after {MAX_ATTEMPTS} attempts",
        workflows::FLAKY_IMPORT,
        workflows::IMPORT_LEGACY_ROWS
    );

    approve_when_waiting(&client, &onboard_id).await?;

    let onboard = client
        .wait_for_orchestration(&onboard_id, WAIT_TIMEOUT)
        .await
        .with_context(|| format!("waiting for {onboard_id}"))?;
    let flaky = client
        .wait_for_orchestration(&flaky_id, WAIT_TIMEOUT)
        .await
        .with_context(|| format!("waiting for {flaky_id}"))?;

    println!("final status:");
    println!("  {onboard_id}: {}", describe(&onboard));
    println!("  {flaky_id}: {}", describe(&flaky));

    let onboard_ok = matches!(onboard, OrchestrationStatus::Completed { .. });
    let flaky_ok = matches!(
        &flaky,
        OrchestrationStatus::Failed { details, .. } if details.category() == "poison"
    );
    if !onboard_ok {
        println!("unexpected: {onboard_id} did not complete");
    }
    if !flaky_ok {
        println!("unexpected: {flaky_id} did not fail as poison");
    }
    Ok(onboard_ok && flaky_ok)
}

/// Raise `Approved` once the orchestration reports that it is waiting for it.
///
/// A positional external event raised before its wait is bound is dropped, so the
/// client watches the custom status (committed in the same turn as the wait).
async fn approve_when_waiting(client: &Client, instance: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + WAIT_TIMEOUT;
    let mut seen_version = 0;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            bail!(
                "{instance} never reached `{}`",
                workflows::AWAITING_APPROVAL
            );
        }
        let status = client
            .wait_for_status_change(instance, seen_version, Duration::from_millis(50), remaining)
            .await
            .with_context(|| format!("watching {instance}"))?;
        match status {
            OrchestrationStatus::Running {
                custom_status,
                custom_status_version,
            } => {
                seen_version = custom_status_version;
                let custom_status = custom_status.unwrap_or_default();
                println!("client: {instance} is {custom_status}");
                if custom_status == workflows::AWAITING_APPROVAL {
                    break;
                }
            }
            OrchestrationStatus::NotFound => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Terminal before approval; the caller reports the final status.
            OrchestrationStatus::Completed { .. } | OrchestrationStatus::Failed { .. } => {
                return Ok(());
            }
        }
    }
    client
        .raise_event(instance, workflows::APPROVED_EVENT, "ops@example.org")
        .await
        .with_context(|| format!("raising {} on {instance}", workflows::APPROVED_EVENT))?;
    println!(
        "client: raised `{}` on {instance}",
        workflows::APPROVED_EVENT
    );
    Ok(())
}

fn describe(status: &OrchestrationStatus) -> String {
    match status {
        OrchestrationStatus::NotFound => "NotFound".to_string(),
        OrchestrationStatus::Running { custom_status, .. } => {
            format!("Running ({})", custom_status.as_deref().unwrap_or("-"))
        }
        OrchestrationStatus::Completed { output, .. } => format!("Completed: {output}"),
        OrchestrationStatus::Failed { details, .. } => format!(
            "Failed [{}]: {}",
            details.category(),
            details.display_message()
        ),
    }
}

/// Suffix that keeps instance ids unique across runs on the same database.
fn run_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{millis}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    fn parse(args: &[&str]) -> anyhow::Result<Option<Option<String>>> {
        parse_args(args.iter().map(|s| s.to_string())).map(|a| a.map(|a| a.database_url))
    }

    #[test]
    fn database_url_flag_wins_over_the_environment() {
        let url = "postgres://u@h/db";
        assert_eq!(
            parse(&["--database-url", url]).unwrap(),
            Some(Some(url.into()))
        );
        assert_eq!(
            parse(&[&format!("--database-url={url}")]).unwrap(),
            Some(Some(url.into()))
        );
    }

    #[test]
    fn help_and_bad_arguments() {
        assert_eq!(parse(&["--help"]).unwrap(), None);
        assert_eq!(parse(&["-h"]).unwrap(), None);
        assert!(parse(&["--database-url"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
    }
}
