//! The activities and orchestrations of the example app.
//!
//! `OnboardCustomer` is the happy path: three activities, a durable timer and an
//! external `Approved` event. `FlakyImport` is the unhappy path: its one activity
//! can never be delivered, so the runtime keeps redelivering it until the attempt
//! count passes `max_attempts` and the message is marked poison.

use std::time::Duration;

use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{ActivityContext, Either2, OrchestrationContext, OrchestrationRegistry};
use serde_json::{Value, json};

pub const ONBOARD_CUSTOMER: &str = "OnboardCustomer";
pub const FLAKY_IMPORT: &str = "FlakyImport";

/// Name of the external event the app raises to approve an onboarding.
pub const APPROVED_EVENT: &str = "Approved";

/// Custom status `OnboardCustomer` sets in the same turn that it starts waiting for
/// `Approved`. Both are committed together, so once a client sees this status the
/// wait is bound and a raised event will be delivered, not dropped as early.
pub const AWAITING_APPROVAL: &str = "awaiting-approval";

/// The activity `FlakyImport` schedules. No handler is registered for it here: the
/// worker abandons every delivery (with a short backoff) and the runtime poisons the
/// message once it has been fetched more than `max_attempts` times.
pub const IMPORT_LEGACY_ROWS: &str = "ImportLegacyRows";

/// Durable "cooling-off" delay between account creation and the approval step.
const COOLING_OFF: Duration = Duration::from_secs(1);

/// How long `OnboardCustomer` waits for `Approved` before giving up.
const APPROVAL_TIMEOUT: Duration = Duration::from_secs(20);

/// Print a progress line from orchestration code, but only on the turn that does
/// the work for the first time, not while the runtime replays history.
fn progress(ctx: &OrchestrationContext, line: impl AsRef<str>) {
    if !ctx.is_replaying() {
        println!("[{}] {}", ctx.instance_id(), line.as_ref());
    }
}

fn field<'a>(value: &'a Value, name: &str) -> Result<&'a str, String> {
    value
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing string field `{name}`"))
}

pub fn activities() -> ActivityRegistry {
    ActivityRegistry::builder()
        .register(
            "ValidateEmail",
            |ctx: ActivityContext, email: String| async move {
                let (local, domain) = email
                    .split_once('@')
                    .ok_or_else(|| format!("`{email}` has no @"))?;
                if local.is_empty() || !domain.contains('.') {
                    return Err(format!("`{email}` is not a plausible address"));
                }
                println!(
                    "[{}]   activity ValidateEmail: {email} ok",
                    ctx.instance_id()
                );
                Ok(email.to_lowercase())
            },
        )
        .register(
            "CreateAccount",
            |ctx: ActivityContext, input: String| async move {
                let customer: Value =
                    serde_json::from_str(&input).map_err(|e| format!("bad input: {e}"))?;
                let id = field(&customer, "customer_id")?;
                let account = format!("acct-{id}");
                println!(
                    "[{}]   activity CreateAccount: created {account}",
                    ctx.instance_id()
                );
                Ok(account)
            },
        )
        .register(
            "SendWelcome",
            |ctx: ActivityContext, input: String| async move {
                let welcome: Value =
                    serde_json::from_str(&input).map_err(|e| format!("bad input: {e}"))?;
                let email = field(&welcome, "email")?;
                let account = field(&welcome, "account")?;
                println!(
                    "[{}]   activity SendWelcome: welcome mail for {account} queued to {email}",
                    ctx.instance_id()
                );
                Ok(format!("welcome sent to {email}"))
            },
        )
        // IMPORT_LEGACY_ROWS is deliberately not registered; see its doc comment.
        .build()
}

pub fn orchestrations() -> OrchestrationRegistry {
    OrchestrationRegistry::builder()
        .register(ONBOARD_CUSTOMER, onboard_customer)
        .register(FLAKY_IMPORT, flaky_import)
        .build()
}

async fn onboard_customer(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    let customer: Value = serde_json::from_str(&input).map_err(|e| format!("bad input: {e}"))?;
    let name = field(&customer, "name")?.to_string();
    progress(&ctx, format!("OnboardCustomer started for {name}"));

    ctx.set_custom_status("validating-email");
    let email = ctx
        .schedule_activity("ValidateEmail", field(&customer, "email")?)
        .await?;

    ctx.set_custom_status("creating-account");
    let account = ctx
        .schedule_activity("CreateAccount", input.clone())
        .await?;

    ctx.set_custom_status("cooling-off");
    progress(
        &ctx,
        format!("durable timer: waiting {}s", COOLING_OFF.as_secs()),
    );
    ctx.schedule_timer(COOLING_OFF).await;
    progress(&ctx, "durable timer fired");

    ctx.set_custom_status(AWAITING_APPROVAL);
    progress(
        &ctx,
        format!("waiting for external event `{APPROVED_EVENT}`"),
    );
    let approval = ctx.select2(
        ctx.schedule_wait(APPROVED_EVENT),
        ctx.schedule_timer(APPROVAL_TIMEOUT),
    );
    let approver = match approval.await {
        Either2::First(data) => data,
        Either2::Second(()) => {
            return Err(format!(
                "no `{APPROVED_EVENT}` event within {}s",
                APPROVAL_TIMEOUT.as_secs()
            ));
        }
    };
    progress(&ctx, format!("received `{APPROVED_EVENT}` from {approver}"));

    ctx.set_custom_status("sending-welcome");
    let welcome = json!({ "email": email, "account": account }).to_string();
    let sent = ctx.schedule_activity("SendWelcome", welcome).await?;

    ctx.set_custom_status("done");
    Ok(json!({
        "customer": name,
        "account": account,
        "approved_by": approver,
        "welcome": sent,
    })
    .to_string())
}

async fn flaky_import(ctx: OrchestrationContext, batch: String) -> Result<String, String> {
    progress(
        &ctx,
        format!("FlakyImport started for batch {batch}; scheduling {IMPORT_LEGACY_ROWS}"),
    );
    ctx.set_custom_status("importing");
    // The runtime fails this orchestration itself once the activity message is
    // poisoned; the `?` only matters if a handler ever gets registered and errors.
    let rows = ctx.schedule_activity(IMPORT_LEGACY_ROWS, batch).await?;
    Ok(rows)
}
