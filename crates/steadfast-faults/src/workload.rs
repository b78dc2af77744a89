//! Orchestrations and activities run by `fault-worker`, and what each instance must end as.
//!
//! Workers print one marker line on stdout when they enter and leave an activity or the
//! paused part of a turn ([`MARK_ACTIVITY_BEGIN`] …), so a test can kill a worker exactly
//! while it holds a lease and has not acked.

use std::time::Duration;

use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{ActivityContext, OrchestrationContext, OrchestrationRegistry};

pub const MARK_ACTIVITY_BEGIN: &str = "MARK activity-begin";
pub const MARK_ACTIVITY_END: &str = "MARK activity-end";
pub const MARK_TURN_BEGIN: &str = "MARK turn-begin";
pub const MARK_TURN_END: &str = "MARK turn-end";
/// Printed once the runtime has started.
pub const MARK_READY: &str = "READY";
/// Printed right before [`MARK_READY`]: `CLOCK <unix ms>` as this process sees it
/// (libfaketime shifts it).
pub const MARK_CLOCK: &str = "CLOCK";

/// Activity adding one to its integer input after `step` of work.
const STEP: &str = "Step";
/// Activity adding one after `long_step` of work (longer than a lease renewal interval).
const LONG_STEP: &str = "LongStep";
/// Activity that always panics.
const EXPLODE: &str = "Explode";
/// Activity no worker registers: every delivery is abandoned until it is poison.
const UNREGISTERED: &str = "NeverRegistered";

/// The kinds of orchestration in the workload; the name is the registered name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Three `Step`s in a row, with a paused (blocking) stretch of turn after the first.
    Chain,
    /// A durable timer, then one `Step`.
    Timer,
    /// Four `Step`s in parallel.
    FanOut,
    /// One `LongStep`, whose lease is renewed while it runs.
    Long,
    /// One activity that panics: fails with an application error.
    Panics,
    /// One activity nobody can run: fails as poison, its message dead-lettered.
    Poisoned,
    /// An orchestration no worker registers: every turn is abandoned (attempt counted)
    /// until the orchestrator-queue poison disposition, which commits without a live
    /// lease if need be, or the claim's attempt ceiling fails it; its message
    /// dead-lettered.
    Unregistered,
}

/// How an instance must end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    Completed(String),
    /// Failed with this `ErrorDetails::category()`.
    Failed(&'static str),
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Chain,
        Kind::Timer,
        Kind::FanOut,
        Kind::Long,
        Kind::Panics,
        Kind::Poisoned,
        Kind::Unregistered,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Chain => "Chain",
            Kind::Timer => "Timer",
            Kind::FanOut => "FanOut",
            Kind::Long => "Long",
            Kind::Panics => "Panics",
            Kind::Poisoned => "Poisoned",
            Kind::Unregistered => "NeverRegisteredOrchestration",
        }
    }

    /// The outcome of an instance of this kind started with integer input `n`.
    pub fn expected(self, n: i64) -> Expected {
        match self {
            Kind::Chain => Expected::Completed(format!("chain:{}", n + 3)),
            Kind::Timer => Expected::Completed(format!("timer:{}", n + 1)),
            Kind::FanOut => Expected::Completed(format!("fanout:{}", 4 * (n + 1))),
            Kind::Long => Expected::Completed(format!("long:{}", n + 1)),
            Kind::Panics => Expected::Failed("application"),
            Kind::Poisoned | Kind::Unregistered => Expected::Failed("poison"),
        }
    }

    /// Whether its failure leaves a message in the dead-letter store.
    pub fn dead_letters(self) -> bool {
        matches!(self, Kind::Poisoned | Kind::Unregistered)
    }
}

/// Durations of the simulated work.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub step: Duration,
    pub long_step: Duration,
    /// How long the `Chain` turn after its first step blocks before it can be acked.
    pub turn_pause: Duration,
    pub timer: Duration,
}

fn mark(line: &str, instance: &str) {
    println!("{line} {instance}");
}

fn plus_one(input: &str) -> Result<String, String> {
    let n: i64 = input
        .trim()
        .parse()
        .map_err(|e| format!("`{input}` is not an integer: {e}"))?;
    Ok((n + 1).to_string())
}

async fn work(ctx: &ActivityContext, input: &str, pause: Duration) -> Result<String, String> {
    let instance = ctx.instance_id().to_string();
    mark(MARK_ACTIVITY_BEGIN, &instance);
    tokio::time::sleep(pause).await;
    let out = plus_one(input);
    mark(MARK_ACTIVITY_END, &instance);
    out
}

pub fn activities(pace: Pace) -> ActivityRegistry {
    ActivityRegistry::builder()
        .register(
            STEP,
            move |ctx: ActivityContext, input: String| async move {
                work(&ctx, &input, pace.step).await
            },
        )
        .register(
            LONG_STEP,
            move |ctx: ActivityContext, input: String| async move {
                work(&ctx, &input, pace.long_step).await
            },
        )
        .register(EXPLODE, |_ctx: ActivityContext, input: String| async move {
            // Inputs are never empty, so this always panics; the `Ok` only gives the
            // closure its return type.
            if !input.is_empty() {
                panic!("Explode always panics (input {input})");
            }
            Ok(String::new())
        })
        .build()
}

pub fn orchestrations(pace: Pace) -> OrchestrationRegistry {
    OrchestrationRegistry::builder()
        .register(Kind::Chain.name(), move |ctx, input| {
            chain(ctx, input, pace)
        })
        .register(Kind::Timer.name(), move |ctx, input| {
            timer(ctx, input, pace)
        })
        .register(Kind::FanOut.name(), fan_out)
        .register(Kind::Long.name(), long)
        .register(Kind::Panics.name(), panics)
        .register(Kind::Poisoned.name(), poisoned)
        .build()
}

async fn chain(ctx: OrchestrationContext, input: String, pace: Pace) -> Result<String, String> {
    let a = ctx.schedule_activity(STEP, input).await?;
    if !ctx.is_replaying() {
        // Hold the instance's lease in the middle of a turn, so that a test can kill the
        // worker after the turn started and before its ack.
        let instance = ctx.instance_id().to_string();
        mark(MARK_TURN_BEGIN, &instance);
        std::thread::sleep(pace.turn_pause);
        mark(MARK_TURN_END, &instance);
    }
    let b = ctx.schedule_activity(STEP, a).await?;
    let c = ctx.schedule_activity(STEP, b).await?;
    Ok(format!("chain:{c}"))
}

async fn timer(ctx: OrchestrationContext, input: String, pace: Pace) -> Result<String, String> {
    ctx.schedule_timer(pace.timer).await;
    let n = ctx.schedule_activity(STEP, input).await?;
    Ok(format!("timer:{n}"))
}

async fn fan_out(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    let steps = (0..4)
        .map(|_| ctx.schedule_activity(STEP, input.clone()))
        .collect();
    let mut sum = 0i64;
    for result in ctx.join(steps).await {
        sum += result?.parse::<i64>().map_err(|e| e.to_string())?;
    }
    Ok(format!("fanout:{sum}"))
}

async fn long(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    let n = ctx.schedule_activity(LONG_STEP, input).await?;
    Ok(format!("long:{n}"))
}

async fn panics(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    ctx.schedule_activity(EXPLODE, input).await
}

async fn poisoned(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    ctx.schedule_activity(UNREGISTERED, input).await
}
