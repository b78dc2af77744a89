//! The multi-process topologies (the livelock scenario's 8x4, the processes scenario): the
//! bench re-executes itself as child
//! worker processes that run a runtime each on the same schema, while the parent drives the
//! workload with a client and merges what the children measured.
//!
//! Protocol. The parent passes a [`ChildConfig`] as JSON in `STEADFAST_BENCH_CHILD` (not on
//! the command line, which `ps` shows to everyone). A child writes lines on stdout:
//! `READY` once its runtime runs, `C <instance>` for every orchestration whose completing
//! ack committed (the parent's closed loop starts the next instance from those), and
//! `P <hot hand-outs> <max attempt> <ack rejections>` twice a second for the parent's
//! progress output. It stops when its stdin closes: it shuts its runtime down, writes its
//! [`ChildReport`] (every fetch sample, hot hand-outs, counters, steadfast diagnostics) to
//! the file named in its config and exits.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::common::{self, Env, Kind};
use steadfast_pg::{Layered, PollingMode};

use crate::probe::{FetchSample, Probe, ProbeCounters, ProbeStats};

pub const CHILD_ENV: &str = "STEADFAST_BENCH_CHILD";

/// What one child process runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildConfig {
    pub index: usize,
    pub provider: String,
    pub database_url: String,
    pub schema: String,
    pub pool: u32,
    pub dispatchers: usize,
    pub workers: usize,
    pub lease_ms: u64,
    pub hot: Option<String>,
    pub overrun_ms: u64,
    pub shutdown_grace_ms: u64,
    pub report: PathBuf,
    /// The runtime's defaults (long polling) instead of the livelock scenario's options.
    #[serde(default)]
    pub long_poll: bool,
    /// steadfast in [`PollingMode::SessionFree`] (`--polling session-free`).
    #[serde(default)]
    pub session_free: bool,
    /// See [`Env::pooler_url`].
    #[serde(default)]
    pub pooler_url: Option<String>,
}

/// What a child measured, written to `ChildConfig::report` when it stops.
#[derive(Serialize, Deserialize)]
pub struct ChildReport {
    pub started_epoch_ms: u64,
    pub fetches: Vec<FetchSample>,
    pub hot_handouts: Vec<(u32, u32)>,
    pub counters: ProbeCounters,
    /// steadfast diagnostics of kind `claimExhausted` or about the hot instance, by kind.
    pub diagnostics: BTreeMap<String, u64>,
    /// steadfast's claim counts in the child (`claim_counts::totals`).
    #[serde(default)]
    pub claims: BTreeMap<String, u64>,
}

/// Counts the steadfast diagnostics the livelock scenario reports: claim exhaustion and
/// anything about the hot instance.
pub fn count_diagnostics(
    rx: &mut tokio::sync::broadcast::Receiver<steadfast_pg::Diagnostic>,
    hot: Option<&str>,
    into: &mut BTreeMap<String, u64>,
) {
    while let Ok(d) = rx.try_recv() {
        if d.kind == steadfast_pg::DiagnosticKind::ClaimExhausted
            || (hot.is_some() && d.instance_id.as_deref() == hot)
        {
            *into.entry(d.kind.event_name().to_string()).or_insert(0) += 1;
        }
    }
}

// ---------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------

/// The body of a child process (`STEADFAST_BENCH_CHILD` set).
pub async fn child_main(cfg: ChildConfig) -> Result<()> {
    let kind = Kind::from_name(&cfg.provider)
        .with_context(|| format!("unknown provider {:?}", cfg.provider))?;
    let env = Env {
        database_url: cfg.database_url.clone(),
        pool: cfg.pool,
        smoke: false,
        run_tag: String::new(),
        livelock_topologies: Vec::new(),
        throughput_dispatchers: None,
        process_counts: None,
        soak_minutes: 0.0,
        soak_recommended_table_settings: false,
        polling: if cfg.session_free {
            PollingMode::SessionFree
        } else {
            PollingMode::Listen
        },
        pooler_url: cfg.pooler_url.clone(),
    };
    let built = common::connect(&env, kind, cfg.schema.clone(), false).await?;
    let mut diag_rx = built.steadfast.as_ref().map(|p| p.subscribe());
    let (tx, mut completions) = mpsc::unbounded_channel();
    let probe = Arc::new(Layered(Probe::new(
        built.provider.clone(),
        cfg.hot.clone(),
        Duration::from_millis(cfg.overrun_ms),
        Some(tx),
    )));
    let stats = probe.stats.clone();
    let rt = common::start_runtime(
        probe.clone(),
        if cfg.long_poll {
            crate::throughput::runtime_options(cfg.dispatchers, cfg.workers)
        } else {
            crate::livelock::runtime_options(
                Duration::from_millis(cfg.lease_ms),
                cfg.dispatchers,
                cfg.workers,
            )
        },
    )
    .await;

    // One writer owns stdout, so lines never interleave.
    let writer = {
        let stats = stats.clone();
        tokio::spawn(async move {
            let mut out = tokio::io::stdout();
            let _ = out.write_all(b"READY\n").await;
            let _ = out.flush().await;
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                let line = tokio::select! {
                    id = completions.recv() => match id {
                        Some(id) => format!("C {id}\n"),
                        None => break,
                    },
                    _ = tick.tick() => {
                        let c = &stats.counters;
                        format!(
                            "P {} {} {}\n",
                            c.hot_fetches.load(Ordering::Relaxed),
                            c.hot_max_attempt.load(Ordering::Relaxed),
                            c.ack_rejected.load(Ordering::Relaxed)
                        )
                    }
                };
                if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
                    break;
                }
            }
        })
    };

    // Run until the parent closes our stdin (or dies).
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;

    rt.shutdown(Some(cfg.shutdown_grace_ms)).await;
    writer.abort();
    let mut diagnostics = BTreeMap::new();
    if let Some(rx) = diag_rx.as_mut() {
        count_diagnostics(rx, cfg.hot.as_deref(), &mut diagnostics);
    }
    let report = ChildReport {
        started_epoch_ms: stats.started_epoch_ms,
        fetches: stats.fetches(),
        hot_handouts: stats.hot_handouts(),
        // A copy of the atomics, through their serde form.
        counters: serde_json::from_value(serde_json::to_value(&stats.counters)?)?,
        diagnostics,
        claims: crate::claim_counts::totals(),
    };
    std::fs::write(&cfg.report, serde_json::to_vec(&report)?)
        .with_context(|| format!("write {}", cfg.report.display()))?;
    if let Some(p) = &built.steadfast {
        p.close().await;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Parent side
// ---------------------------------------------------------------------------

/// Latest `P` line of each child: (hot hand-outs, max attempt, ack rejections).
type Live = Arc<Mutex<Vec<(u32, u32, u64)>>>;

struct ChildProc {
    child: Child,
    reader: JoinHandle<()>,
    report: PathBuf,
}

/// Running child processes of one run.
pub struct Fleet {
    children: Vec<ChildProc>,
    live: Live,
    grace_ms: u64,
}

pub struct FleetSpec<'a> {
    pub env: &'a Env,
    pub kind: Kind,
    pub schema: &'a str,
    pub processes: usize,
    pub dispatchers_per_process: usize,
    pub workers_per_process: usize,
    pub lease: Duration,
    pub hot: Option<String>,
    pub overrun: Duration,
    /// See [`ChildConfig::long_poll`].
    pub long_poll: bool,
}

impl Fleet {
    /// Starts the children and waits until every one of them runs its runtime. Completions
    /// are recorded in `stats` and sent on `completions`.
    pub async fn start(
        spec: FleetSpec<'_>,
        stats: Arc<ProbeStats>,
        completions: mpsc::UnboundedSender<String>,
    ) -> Result<Fleet> {
        let exe = std::env::current_exe().context("locate the bench executable")?;
        let t0 = std::time::Instant::now();
        let live: Live = Arc::new(Mutex::new(vec![(0, 0, 0); spec.processes]));
        // Enough for the child's dispatchers plus its client and worker, never fewer than
        // its share of the single-process pool.
        let pool =
            (spec.dispatchers_per_process as u32 + 2).max(spec.env.pool / spec.processes as u32);
        let dir = std::env::temp_dir();
        let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<usize>();
        let mut children = Vec::new();
        for index in 0..spec.processes {
            let report = dir.join(format!(
                "steadfast-bench-{}-{}-{index}.json",
                std::process::id(),
                spec.schema
            ));
            let _ = std::fs::remove_file(&report);
            let cfg = ChildConfig {
                index,
                provider: spec.kind.name().into(),
                database_url: spec.env.database_url.clone(),
                schema: spec.schema.to_string(),
                pool,
                dispatchers: spec.dispatchers_per_process,
                workers: spec.workers_per_process,
                lease_ms: spec.lease.as_millis() as u64,
                hot: spec.hot.clone(),
                overrun_ms: spec.overrun.as_millis() as u64,
                shutdown_grace_ms: spec.env.shutdown_grace_ms(),
                report: report.clone(),
                long_poll: spec.long_poll,
                session_free: spec.env.polling == PollingMode::SessionFree,
                pooler_url: spec.env.pooler_url.clone(),
            };
            let mut child = Command::new(&exe)
                .env(CHILD_ENV, serde_json::to_string(&cfg)?)
                .env("DUROXIDE_PG_POOL_MAX", pool.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .context("start a child bench process")?;
            let stdout = child.stdout.take().context("child stdout")?;
            let reader = {
                let (stats, completions, live, ready) = (
                    stats.clone(),
                    completions.clone(),
                    live.clone(),
                    ready_tx.clone(),
                );
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stdout).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if line == "READY" {
                            let _ = ready.send(index);
                        } else if let Some(id) = line.strip_prefix("C ") {
                            stats.record_completion();
                            let _ = completions.send(id.to_string());
                        } else if let Some(rest) = line.strip_prefix("P ") {
                            let v: Vec<u64> =
                                rest.split(' ').filter_map(|x| x.parse().ok()).collect();
                            if let [h, a, r] = v[..] {
                                live.lock().unwrap()[index] = (h as u32, a as u32, r);
                            }
                        }
                    }
                })
            };
            children.push(ChildProc {
                child,
                reader,
                report,
            });
        }
        drop(ready_tx);
        let mut fleet = Fleet {
            children,
            live,
            grace_ms: spec.env.shutdown_grace_ms(),
        };
        let mut ready = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while ready < spec.processes {
            match tokio::time::timeout_at(deadline, ready_rx.recv()).await {
                Ok(Some(_)) => ready += 1,
                Ok(None) | Err(_) => {
                    fleet.kill().await;
                    bail!(
                        "only {ready} of {} child processes started (see their errors above)",
                        spec.processes
                    );
                }
            }
        }
        crate::common::progress(&format!(
            "  {} child processes ready after {:.1} s",
            spec.processes,
            t0.elapsed().as_secs_f64()
        ));
        Ok(fleet)
    }

    /// Sums of the children's latest progress lines: (hot hand-outs, max attempt, ack rejections).
    pub fn live(&self) -> (u32, u32, u64) {
        self.live
            .lock()
            .unwrap()
            .iter()
            .fold((0, 0, 0), |(h, a, r), &(h2, a2, r2)| {
                (h + h2, a.max(a2), r + r2)
            })
    }

    async fn kill(&mut self) {
        for c in &mut self.children {
            let _ = c.child.kill().await;
        }
    }

    /// Stops every child, then merges their samples and counters into `stats` and their
    /// diagnostics into `diagnostics`. Returns the sums of their claim counts.
    pub async fn stop(
        mut self,
        stats: &ProbeStats,
        diagnostics: &mut BTreeMap<String, u64>,
    ) -> Result<BTreeMap<String, u64>> {
        let mut claims = BTreeMap::new();
        for c in &mut self.children {
            drop(c.child.stdin.take());
        }
        let wait = Duration::from_millis(self.grace_ms) + Duration::from_secs(30);
        let mut failures = Vec::new();
        for (i, c) in self.children.iter_mut().enumerate() {
            match tokio::time::timeout(wait, c.child.wait()).await {
                Ok(Ok(s)) if s.success() => {}
                Ok(Ok(s)) => failures.push(format!("child {i} exited with {s}")),
                Ok(Err(e)) => failures.push(format!("child {i}: {e}")),
                Err(_) => {
                    let _ = c.child.kill().await;
                    failures.push(format!("child {i} did not stop within {wait:?}"));
                }
            }
        }
        for c in self.children.drain(..) {
            let _ = c.reader.await;
            let text = match std::fs::read(&c.report) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{}: {e}", c.report.display()));
                    continue;
                }
            };
            let _ = std::fs::remove_file(&c.report);
            let r: ChildReport = serde_json::from_slice(&text).context("child report")?;
            let offset = r.started_epoch_ms as i64 - stats.started_epoch_ms as i64;
            stats.merge_remote(offset, &r.fetches, &r.hot_handouts);
            let (mine, theirs) = (&stats.counters, &r.counters);
            for (to, from) in [
                (&mine.ack_ok, &theirs.ack_ok),
                (&mine.ack_rejected, &theirs.ack_rejected),
                (&mine.hot_ack_rejected, &theirs.hot_ack_rejected),
                (&mine.messages_acked, &theirs.messages_acked),
                (&mine.worker_fetch_found, &theirs.worker_fetch_found),
                (&mine.worker_fetch_empty, &theirs.worker_fetch_empty),
            ] {
                to.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            // Hand-outs were merged with their times; the counters follow from them.
            mine.hot_fetches.fetch_add(
                theirs.hot_fetches.load(Ordering::Relaxed),
                Ordering::Relaxed,
            );
            mine.hot_max_attempt.fetch_max(
                theirs.hot_max_attempt.load(Ordering::Relaxed),
                Ordering::Relaxed,
            );
            for (k, v) in r.diagnostics {
                *diagnostics.entry(k).or_insert(0) += v;
            }
            for (k, v) in r.claims {
                *claims.entry(k).or_insert(0) += v;
            }
        }
        if !failures.is_empty() {
            bail!("child processes: {}", failures.join("; "));
        }
        Ok(claims)
    }
}
