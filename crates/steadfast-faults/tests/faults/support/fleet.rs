//! Real `fault-worker` processes. Each worker's stdout markers are tracked, so a test can
//! tell whether it is inside an activity or inside the paused part of a turn right now.

use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use steadfast_faults::workload::{
    MARK_ACTIVITY_BEGIN, MARK_ACTIVITY_END, MARK_CLOCK, MARK_READY, MARK_TURN_BEGIN, MARK_TURN_END,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::time::Instant;

/// What a worker process reported on stdout.
#[derive(Default)]
pub struct Marks {
    pub ready: AtomicBool,
    pub activities_in_flight: AtomicI64,
    pub turns_in_flight: AtomicI64,
    /// The process's wall clock at start (unix ms), as libfaketime shows it.
    pub clock_ms: AtomicI64,
    /// When each activity began (test clock) and the instance it belongs to.
    pub activity_begins: Mutex<Vec<(Instant, String)>>,
}

/// How to start a worker: arguments after the common ones, and extra environment.
#[derive(Clone, Default)]
pub struct WorkerSpec {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

pub struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    pub marks: Arc<Marks>,
    pub spec: WorkerSpec,
    /// Its connections' `application_name` ([`WORKER_APPLICATION_PREFIX`] and a number).
    pub application_name: String,
}

/// Workers' connections are named this and their spawn number in `pg_stat_activity`.
pub const WORKER_APPLICATION_PREFIX: &str = "steadfast-fault-worker-";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Inside an activity (its work item leased, not acked).
    MidActivity,
    /// Inside the paused part of a `Chain` turn (the instance leased, the turn not acked).
    MidTurn,
}

pub struct Fleet {
    url: String,
    schema: String,
    pub workers: Vec<Worker>,
    /// Workers started so far, restarts included (names the log files).
    spawned: usize,
}

impl Fleet {
    pub fn new(url: &str, schema: &str) -> Self {
        Self {
            url: url.to_string(),
            schema: schema.to_string(),
            workers: Vec::new(),
            spawned: 0,
        }
    }

    fn spawn(&mut self, spec: WorkerSpec) -> Worker {
        self.spawned += 1;
        let log_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fault-workers");
        std::fs::create_dir_all(&log_dir).unwrap();
        let log = std::fs::File::create(
            log_dir.join(format!("{}-{}.stderr.log", self.schema, self.spawned)),
        )
        .unwrap();
        let application_name = format!("{WORKER_APPLICATION_PREFIX}{}", self.spawned);
        let separator = if self.url.contains('?') { '&' } else { '?' };
        let url = format!("{}{separator}application_name={application_name}", self.url);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fault-worker"));
        cmd.args(["--url", &url, "--schema", &self.schema])
            .args(&spec.args)
            .envs(spec.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("fault-worker starts");
        let marks = Arc::new(Marks::default());
        let stdout = child.stdout.take().unwrap();
        let tracked = marks.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let counter = |delta: i64, c: &AtomicI64| c.fetch_add(delta, Ordering::SeqCst);
                if let Some(instance) = line.strip_prefix(MARK_ACTIVITY_BEGIN) {
                    counter(1, &tracked.activities_in_flight);
                    tracked
                        .activity_begins
                        .lock()
                        .unwrap()
                        .push((Instant::now(), instance.trim().to_string()));
                } else if line.starts_with(MARK_ACTIVITY_END) {
                    counter(-1, &tracked.activities_in_flight);
                } else if line.starts_with(MARK_TURN_BEGIN) {
                    counter(1, &tracked.turns_in_flight);
                } else if line.starts_with(MARK_TURN_END) {
                    counter(-1, &tracked.turns_in_flight);
                } else if line == MARK_READY {
                    tracked.ready.store(true, Ordering::SeqCst);
                } else if let Some(ms) = line.strip_prefix(MARK_CLOCK)
                    && let Ok(ms) = ms.trim().parse()
                {
                    tracked.clock_ms.store(ms, Ordering::SeqCst);
                }
            }
        });
        let stdin = child.stdin.take();
        Worker {
            child,
            stdin,
            marks,
            spec,
            application_name,
        }
    }

    /// Start a worker and wait until its runtime runs.
    pub async fn add(&mut self, spec: WorkerSpec) -> usize {
        let worker = self.spawn(spec);
        self.workers.push(worker);
        let i = self.workers.len() - 1;
        self.wait_ready(i).await;
        i
    }

    async fn wait_ready(&mut self, i: usize) {
        let marks = self.workers[i].marks.clone();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
        while !marks.ready.load(Ordering::SeqCst) {
            if let Ok(Some(status)) = self.workers[i].child.try_wait() {
                panic!("worker {i} exited before it was ready: {status}");
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "worker {i} not ready after 90 s"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `kill -9` worker `i` and start a replacement with the same spec in its place.
    pub async fn kill9_and_replace(&mut self, i: usize) {
        self.kill9(i).await;
        self.replace(i).await;
    }

    /// `kill -9` worker `i` and wait for it to exit.
    pub async fn kill9(&mut self, i: usize) {
        let w = &mut self.workers[i];
        w.child.start_kill().expect("SIGKILL");
        let status = w.child.wait().await.unwrap();
        assert!(!status.success(), "killed worker exited cleanly: {status}");
    }

    /// Start a new worker with worker `i`'s spec in its place.
    pub async fn replace(&mut self, i: usize) {
        let spec = self.workers[i].spec.clone();
        self.workers[i] = self.spawn(spec);
        self.wait_ready(i).await;
    }

    /// The worker whose connections carry `application_name`.
    pub fn by_application_name(&self, application_name: &str) -> Option<usize> {
        self.workers
            .iter()
            .position(|w| w.application_name == application_name)
    }

    /// Wait until some worker is inside `window` and return it.
    pub async fn find_in(&self, window: Window, timeout: Duration) -> Option<usize> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let found = self.workers.iter().position(|w| {
                let c = match window {
                    Window::MidActivity => &w.marks.activities_in_flight,
                    Window::MidTurn => &w.marks.turns_in_flight,
                };
                c.load(Ordering::SeqCst) > 0
            });
            if found.is_some() || tokio::time::Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Wait until an activity of an instance whose id starts with `prefix` begins after
    /// `since`, and return when it began.
    pub async fn activity_begun(
        &self,
        prefix: &str,
        since: Instant,
        timeout: Duration,
    ) -> Option<Instant> {
        let deadline = Instant::now() + timeout;
        loop {
            let found = self
                .workers
                .iter()
                .flat_map(|w| {
                    w.marks
                        .activity_begins
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|(at, id)| *at > since && id.starts_with(prefix))
                        .map(|(at, _)| *at)
                        .min()
                })
                .min();
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Ask every worker to stop (stdin closed), waiting for each; a worker that does not
    /// stop in time is killed and reported.
    pub async fn stop_all(&mut self) {
        let mut stuck = Vec::new();
        for (i, w) in self.workers.iter_mut().enumerate() {
            drop(w.stdin.take());
            match tokio::time::timeout(Duration::from_secs(30), w.child.wait()).await {
                Ok(status) => {
                    let status = status.unwrap();
                    assert!(status.success(), "worker {i} exited with {status}");
                }
                Err(_) => {
                    let _ = w.child.start_kill();
                    stuck.push(i);
                }
            }
        }
        assert!(
            stuck.is_empty(),
            "workers {stuck:?} did not stop when asked"
        );
    }
}
