//! `steadfast-bench`: steadfast-pg side by side with duroxide-pg 0.1.38 on the duroxide
//! 0.1.32 runtime. See `bench/README.md`.

mod backlog;
mod ceiling;
mod claim_counts;
mod common;
mod contention;
mod driver;
mod fleet;
mod livelock;
mod probe;
mod processes;
mod sessions;
mod soak;
mod statements;
mod throughput;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use steadfast_pg::PollingMode;

use crate::common::{Env, Kind, Topology, progress};

const USAGE: &str = "\
usage: steadfast-bench [--smoke] [--provider steadfast|duroxide-pg|both]
                       [--scenario livelock|contention|throughput|processes|ceiling|backlog|sessions|soak|all]
                       [--livelock-topology 1x32|8x4|both] [--dispatchers N,N,...]
                       [--processes N,N,...]
                       [--out bench/results/<file>.json] [--database-url URL] [--pool N]
                       [--polling listen|session-free] [--pooler-url URL]

  --smoke          seconds-long version of each scenario (what CI runs)
  --provider       which provider(s) to run; default both
  --scenario       comma-separated list or `all` (default; every scenario but soak)
  --livelock-topology
                   1x32: one process with 32 orchestration dispatchers; 8x4: eight child
                   processes with 4 each, on the same schema; both (default) runs 1x32, then 8x4
  --dispatchers    the throughput scenario's dispatcher counts (comma-separated);
                   default 1,2,4,8,16,32 (2 with --smoke)
  --processes      the processes scenario's child process counts (comma-separated), each
                   with 4 orchestration and 4 worker dispatchers; default 1,2,4,8 (2 of 2
                   with --smoke)
  --out            JSON results file; default bench/results/run-<epoch>.json
                   (target/bench-smoke-<epoch>.json with --smoke)
  --database-url   default $STEADFAST_BENCH_DATABASE_URL, $STEADFAST_TEST_DATABASE_URL,
                   or postgres://postgres@127.0.0.1:5432/test
  --pool N         connection pool size of each provider (both the same); default 32,
                   8 with --smoke
  --soak-minutes   how long the soak scenario runs (steadfast, trivial workload at the
                   first --dispatchers count, default 16); default 15, 0.1 to 240
  --soak-table-settings
                   server (default: the tables as migrated) or recommended (docs/capacity.md's
                   per-table autovacuum settings, applied to the run's schema)
  --polling        steadfast's PollingMode: listen (default; LISTEN/NOTIFY long polls) or
                   session-free (no session state; the runtime short-polls)
  --pooler-url     steadfast connects through this URL, e.g. PgBouncer in transaction
                   mode (needs --polling session-free and --provider steadfast); set-up,
                   measurements and clean-up use --database-url
";

const SCENARIOS: [&str; 7] = [
    "livelock",
    "contention",
    "throughput",
    "processes",
    "ceiling",
    "backlog",
    "sessions",
];

struct Args {
    smoke: bool,
    kinds: Vec<Kind>,
    scenarios: Vec<String>,
    out: Option<PathBuf>,
    database_url: String,
    pool: u32,
    topologies: Vec<Topology>,
    dispatchers: Option<Vec<usize>>,
    processes: Option<Vec<usize>>,
    soak_minutes: f64,
    soak_recommended_table_settings: bool,
    polling: PollingMode,
    pooler_url: Option<String>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        smoke: false,
        kinds: vec![Kind::Steadfast, Kind::DuroxidePg],
        scenarios: SCENARIOS.iter().map(|s| s.to_string()).collect(),
        out: None,
        database_url: std::env::var("STEADFAST_BENCH_DATABASE_URL")
            .or_else(|_| std::env::var("STEADFAST_TEST_DATABASE_URL"))
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into()),
        pool: 0,
        topologies: vec![Topology::ONE_BY_32, Topology::EIGHT_BY_4],
        dispatchers: None,
        processes: None,
        soak_minutes: 15.0,
        soak_recommended_table_settings: false,
        polling: PollingMode::Listen,
        pooler_url: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |name: &str| -> Result<String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().with_context(|| format!("{name} needs a value")),
            }
        };
        match flag.as_str() {
            "--smoke" => args.smoke = true,
            "--provider" => {
                args.kinds = match value("--provider")?.as_str() {
                    "steadfast" => vec![Kind::Steadfast],
                    "duroxide-pg" => vec![Kind::DuroxidePg],
                    "both" => vec![Kind::Steadfast, Kind::DuroxidePg],
                    other => bail!("--provider: unknown provider {other:?}\n\n{USAGE}"),
                }
            }
            "--scenario" => {
                let v = value("--scenario")?;
                let mut list = Vec::new();
                for s in v.split(',') {
                    if s == "all" {
                        list.extend(SCENARIOS.iter().map(|s| s.to_string()));
                    } else if SCENARIOS.contains(&s) || s == "soak" {
                        list.push(s.to_string());
                    } else {
                        bail!("--scenario: unknown scenario {s:?}\n\n{USAGE}");
                    }
                }
                list.dedup();
                args.scenarios = list;
            }
            "--livelock-topology" => {
                args.topologies = match value("--livelock-topology")?.as_str() {
                    "1x32" => vec![Topology::ONE_BY_32],
                    "8x4" => vec![Topology::EIGHT_BY_4],
                    "both" => vec![Topology::ONE_BY_32, Topology::EIGHT_BY_4],
                    other => bail!("--livelock-topology: unknown topology {other:?}\n\n{USAGE}"),
                }
            }
            "--dispatchers" => {
                args.dispatchers = Some(counts("--dispatchers", &value("--dispatchers")?)?)
            }
            "--processes" => args.processes = Some(counts("--processes", &value("--processes")?)?),
            "--out" => args.out = Some(PathBuf::from(value("--out")?)),
            "--database-url" => args.database_url = value("--database-url")?,
            "--pool" => {
                args.pool = value("--pool")?
                    .parse()
                    .context("--pool must be a number")?;
                if !(2..=90).contains(&args.pool) {
                    bail!("--pool must be between 2 and 90");
                }
            }
            "--polling" => {
                args.polling = match value("--polling")?.as_str() {
                    "listen" => PollingMode::Listen,
                    "session-free" => PollingMode::SessionFree,
                    other => {
                        bail!("--polling: {other:?} is not a polling mode (listen or session-free)")
                    }
                }
            }
            "--soak-minutes" => {
                args.soak_minutes = value("--soak-minutes")?
                    .parse()
                    .context("--soak-minutes must be a number")?;
                if !(0.1..=240.0).contains(&args.soak_minutes) {
                    bail!("--soak-minutes must be between 0.1 and 240");
                }
            }
            "--soak-table-settings" => {
                args.soak_recommended_table_settings =
                    match value("--soak-table-settings")?.as_str() {
                        "server" => false,
                        "recommended" => true,
                        other => bail!(
                            "--soak-table-settings: {other:?} is neither server nor recommended"
                        ),
                    }
            }
            "--pooler-url" => args.pooler_url = Some(value("--pooler-url")?),
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}\n\n{USAGE}"),
        }
    }
    if args.pooler_url.is_some() {
        if args.polling != PollingMode::SessionFree {
            bail!(
                "--pooler-url: a transaction-mode pooler keeps no session state; add --polling session-free"
            );
        }
        if args.kinds != [Kind::Steadfast] {
            bail!(
                "--pooler-url: only steadfast connects through the pooler (duroxide-pg needs session state); add --provider steadfast"
            );
        }
    }
    if args.pool == 0 {
        // Smoke: fewer connections to open per provider (each costs server CPU at start).
        args.pool = if args.smoke { 8 } else { 32 };
    }
    Ok(args)
}

/// A comma-separated list of counts from 1 to 64, for `flag`.
fn counts(flag: &str, list: &str) -> Result<Vec<usize>> {
    list.split(',')
        .map(|n| match n.trim().parse::<usize>() {
            Ok(n) if (1..=64).contains(&n) => Ok(n),
            _ => Err(anyhow::anyhow!("{flag}: {n:?} is not a count from 1 to 64")),
        })
        .collect()
}

fn command_output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The 1-minute load average: other work on the machine skews every number here.
pub fn loadavg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
}

fn machine_json() -> Value {
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    });
    let mem_gib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0)
    });
    json!({
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "cpu_model": cpu,
        "memory_gib": mem_gib,
        "kernel": command_output("uname", &["-sr"]),
        "git_commit": command_output("git", &["rev-parse", "--short", "HEAD"]),
        "git_dirty": command_output("git", &["status", "--porcelain"]).map(|s| !s.is_empty()),
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
    })
}

async fn database_json(env: &Env) -> Value {
    let Ok(pool) = common::admin_pool(env).await else {
        return Value::Null;
    };
    let mut v = serde_json::Map::new();
    for (key, sql) in [
        ("version", "select version()"),
        ("max_connections", "show max_connections"),
        ("shared_buffers", "show shared_buffers"),
        ("synchronous_commit", "show synchronous_commit"),
        ("fsync", "show fsync"),
    ] {
        if let Ok(s) = sqlx::query_scalar::<_, String>(sql).fetch_one(&pool).await {
            v.insert(key.into(), json!(s));
        }
    }
    pool.close().await;
    Value::Object(v)
}

/// The pooler steadfast connects through, and its settings as PgBouncer reports them
/// (`SHOW CONFIG` on its admin console, when it lets us in; simple-query protocol only).
async fn pooler_json(url: Option<&str>) -> Value {
    let Some(url) = url else {
        return Value::Null;
    };
    let mut settings = serde_json::Map::new();
    for row in common::pooler_admin_command(url, "SHOW CONFIG")
        .await
        .unwrap_or_default()
    {
        use sqlx::Row;
        let (Ok(key), Ok(value)) = (row.try_get::<String, _>(0), row.try_get::<String, _>(1))
        else {
            continue;
        };
        if [
            "pool_mode",
            "default_pool_size",
            "max_client_conn",
            "max_db_connections",
            "max_prepared_statements",
        ]
        .contains(&key.as_str())
        {
            settings.insert(key, json!(value));
        }
    }
    json!({ "url": url, "settings": settings })
}

async fn run(args: Args) -> Result<()> {
    let started_epoch = common::epoch_secs();
    let env = Env {
        database_url: args.database_url.clone(),
        pool: args.pool,
        smoke: args.smoke,
        run_tag: format!("{}", started_epoch % 1_000_000_000),
        livelock_topologies: args.topologies.clone(),
        throughput_dispatchers: args.dispatchers.clone(),
        process_counts: args.processes.clone(),
        soak_minutes: args.soak_minutes,
        soak_recommended_table_settings: args.soak_recommended_table_settings,
        polling: args.polling,
        pooler_url: args.pooler_url.clone(),
    };
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(if args.smoke {
            format!("target/bench-smoke-{started_epoch}.json")
        } else {
            format!("bench/results/run-{started_epoch}.json")
        })
    });
    let command: Vec<String> = std::env::args().collect();
    progress(&format!(
        "steadfast-bench {}: providers [{}], scenarios [{}], pool {}, results -> {}",
        if args.smoke { "(smoke)" } else { "" },
        args.kinds
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", "),
        args.scenarios.join(", "),
        args.pool,
        out.display()
    ));
    let database = database_json(&env).await;
    if database.is_null() {
        bail!("database not reachable (set --database-url or STEADFAST_BENCH_DATABASE_URL)");
    }
    let mut results = serde_json::Map::new();
    let mut report = json!({
        "schema_version": 1,
        "started_at_epoch_s": started_epoch,
        "command": command.join(" "),
        "smoke": args.smoke,
        "providers": args.kinds.iter().map(|k| k.name()).collect::<Vec<_>>(),
        "versions": { "duroxide": "0.1.32", "duroxide-pg": "0.1.38", "steadfast-pg": env!("CARGO_PKG_VERSION") },
        "pool_size": args.pool,
        "steadfast_polling": match args.polling {
            PollingMode::Listen => "listen",
            PollingMode::SessionFree => "session-free",
        },
        "steadfast_pooler": pooler_json(args.pooler_url.as_deref()).await,
        "steadfast_claim_overrides": {
            "fanout": common::claim_overrides().0,
            "max_claim_attempts": common::claim_overrides().1,
        },
        "machine": machine_json(),
        "database": database,
    });
    let write = |report: &Value, results: &serde_json::Map<String, Value>| -> Result<()> {
        let mut r = report.clone();
        r["scenarios"] = Value::Object(results.clone());
        if let Some(dir) = out.parent() {
            std::fs::create_dir_all(dir).ok();
        }
        std::fs::write(&out, serde_json::to_string_pretty(&r)? + "\n")
            .with_context(|| format!("write {}", out.display()))
    };
    for scenario in &args.scenarios {
        let t = Instant::now();
        let load_before = loadavg();
        progress(&format!(
            "=== scenario {scenario} === (load average {})",
            load_before.map_or("?".into(), |l| format!("{l:.2}"))
        ));
        if load_before.is_some_and(|l| l > 1.5) {
            progress("warning: the machine is busy (load average > 1.5); numbers will be skewed");
        }
        let value = match scenario.as_str() {
            "livelock" => livelock::run(&env, &args.kinds).await,
            "contention" => contention::run(&env, &args.kinds).await,
            "throughput" => throughput::run(&env, &args.kinds).await,
            "processes" => processes::run(&env, &args.kinds).await,
            "ceiling" => ceiling::run(&env).await,
            "backlog" => backlog::run(&env, &args.kinds).await,
            "sessions" => sessions::run(&env, &args.kinds).await,
            "soak" => soak::run(&env, &args.kinds).await,
            _ => unreachable!(),
        }
        .with_context(|| format!("scenario {scenario}"))?;
        let mut value = value;
        value["wall_time_s"] = json!(common::round2(t.elapsed().as_secs_f64()));
        value["load_average_before"] = json!(load_before);
        value["load_average_after"] = json!(loadavg());
        results.insert(scenario.clone(), value);
        // Write after every scenario, so a late failure keeps what was measured.
        write(&report, &results)?;
        progress(&format!(
            "=== scenario {scenario} done in {:.1} s ===",
            t.elapsed().as_secs_f64()
        ));
    }
    // Throughput as a fraction of the database's own ceiling, when both ran.
    if let (Some(t), Some(c)) = (results.get("throughput"), results.get("ceiling")) {
        let summary = throughput::versus_ceiling(t, c);
        report["throughput_vs_ceiling"] = summary;
    }
    write(&report, &results)?;
    progress(&format!("results written to {}", out.display()));
    Ok(())
}

/// Runs `work` on a multi-threaded tokio runtime; errors go to stderr prefixed with `who`.
fn block_on(who: &str, work: impl std::future::Future<Output = Result<()>>) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{who}: tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A child worker process of a multi-process topology (`fleet.rs`).
fn child(cfg: &str) -> ExitCode {
    let cfg: fleet::ChildConfig = match serde_json::from_str(cfg) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("steadfast-bench child: bad {}: {e}", fleet::CHILD_ENV);
            return ExitCode::from(2);
        }
    };
    // Its claim counts go back in its report (the processes scenario adds them up).
    let _ = claim_counts::install();
    let who = format!("steadfast-bench child {}", cfg.index);
    block_on(&who, fleet::child_main(cfg))
}

fn main() -> ExitCode {
    common::start_clock();
    if let Ok(cfg) = std::env::var(fleet::CHILD_ENV) {
        return child(&cfg);
    }
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("steadfast-bench: {e:#}");
            return ExitCode::from(2);
        }
    };
    if !claim_counts::install() {
        eprintln!(
            "steadfast-bench: another metrics recorder was installed; claim counts not recorded"
        );
    }
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("STEADFAST_BENCH_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    // duroxide-pg sizes its pool from this variable when it connects; set it before any
    // thread exists so both providers run with the same pool size.
    // SAFETY: single-threaded here; no other thread reads the environment yet.
    unsafe { std::env::set_var("DUROXIDE_PG_POOL_MAX", args.pool.to_string()) };
    block_on("steadfast-bench", run(args))
}
