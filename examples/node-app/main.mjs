// steadfast example app for Node.js (run it with ./scripts/example.sh).
//
// A small agent-style service in the PilotSwarm manner: one Runtime with activities and
// generator orchestrations, a Client that starts work and raises events, and the Runtime's
// typed diagnostic events printed as they arrive. Activities and orchestrations are typed
// references (defineActivity, defineOrchestration): one value registers each, schedules or
// starts it and types its input and output, and `yield*` takes a task's result.
//
// * OnboardCustomer: two activities, a durable timer, then waits for the external event
//   `Approved` (raised below once the orchestration reports it is waiting), then one more
//   activity. Expected: Completed.
// * FlakyImport: its one step is an activity no worker here can run. duroxide redelivers it
//   until its attempt count passes maxAttempts (3) and fails it as poison; the Runtime emits
//   `poisoned` (and `diagnostic`). Expected: Failed (poison) and a poison event for it.
//
// Storage: PostgreSQL when --database-url URL is given or STEADFAST_DATABASE_URL is set
// (schema steadfast_example_node), else a SQLite file under target/steadfast-example/.
// Exit status: 0 when everything ended as expected, 1 when not, 2 on a setup error.

import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

// duroxide's own logs go to stdout; keep them to errors so the events stand out
// (RUST_LOG=warn shows the redeliveries behind the poison).
process.env.RUST_LOG ??= 'error'

const require = createRequire(import.meta.url)
const { SqliteProvider, PostgresProvider, Client, Runtime, defineActivity, defineOrchestration } = require('../../lib/index.js')

const MAX_ATTEMPTS = 3
const WAIT_MS = 30_000
/** The typed events a Runtime emits (each also comes as `diagnostic`). */
const EVENT_KINDS = ['poisoned', 'poisonCommittedWithoutLease', 'poisonLost', 'attemptCeilingEnforced', 'ackRejected', 'claimExhausted', 'diagnosticsLagged']
/** Events that mean "this message was stopped as poison". */
const POISON_KINDS = new Set(['poisoned', 'poisonCommittedWithoutLease', 'attemptCeilingEnforced'])

function databaseUrl(argv) {
  const i = argv.indexOf('--database-url')
  if (i >= 0) {
    if (!argv[i + 1]) throw new Error('--database-url needs a value (postgres://...)')
    return argv[i + 1]
  }
  const inline = argv.find((a) => a.startsWith('--database-url='))
  if (inline) return inline.slice('--database-url='.length)
  return process.env.STEADFAST_DATABASE_URL || undefined
}

async function openProvider(url) {
  if (url) {
    console.log('provider: PostgreSQL via steadfast-pg (schema steadfast_example_node)')
    return PostgresProvider.connectWithOptions({ url, schema: 'steadfast_example_node', maxConnections: 4 })
  }
  const here = path.dirname(fileURLToPath(import.meta.url))
  const file = path.resolve(here, '../../target/steadfast-example/node-example.db')
  console.log(`provider: embedded SQLite at ${file}`)
  return SqliteProvider.open(file)
}

function describe(s) {
  if (s.status === 'Completed') return `Completed: ${JSON.stringify(s.output)}`
  if (s.status === 'Failed') return `Failed [${s.errorCategory}]: ${s.error}`
  return s.status
}

const validateEmail = defineActivity('ValidateEmail', async (_ctx, email) => email.trim().toLowerCase())
const createAccount = defineActivity('CreateAccount', async (ctx, customer) => {
  ctx.traceInfo(`creating account for ${customer.customerId}`)
  return { accountId: `acct-${customer.customerId}` }
})
const sendWelcome = defineActivity('SendWelcome', async (_ctx, { email }) => `welcome sent to ${email}`)

const onboardCustomer = defineOrchestration('OnboardCustomer', function* (ctx, customer) {
  const email = yield* ctx.scheduleActivity(validateEmail, customer.email)
  const account = yield* ctx.scheduleActivity(createAccount, customer)
  yield* ctx.scheduleTimer(1000)
  ctx.setCustomStatus('awaiting-approval')
  const approval = yield* ctx.race(ctx.waitForEvent('Approved'), ctx.scheduleTimer(60_000))
  if (approval.index !== 0) throw new Error('approval timed out')
  ctx.setCustomStatus('approved')
  const welcome = yield* ctx.scheduleActivity(sendWelcome, { email })
  return { ...account, approvedBy: approval.value, welcome }
})
// No worker registers ImportLegacyRows (so it is scheduled by name): this step can only end as poison.
const flakyImport = defineOrchestration('FlakyImport', function* (ctx, batch) {
  return yield* ctx.scheduleActivity('ImportLegacyRows', batch)
})

function register(runtime) {
  runtime.registerActivity(validateEmail).registerActivity(createAccount).registerActivity(sendWelcome)
  runtime.registerOrchestration(onboardCustomer).registerOrchestration(flakyImport)
}

async function main() {
  const provider = await openProvider(databaseUrl(process.argv.slice(2)))
  const runtime = new Runtime(provider, {
    maxAttempts: MAX_ATTEMPTS,
    // Redeliver the undeliverable import quickly so the poison path takes about a second.
    unregisteredBackoffBaseMs: 100,
    unregisteredBackoffMaxMs: 1000,
    logLevel: 'error',
  })
  register(runtime)

  const events = []
  for (const kind of EVENT_KINDS) {
    runtime.on(kind, (d) => {
      events.push(d)
      const where = d.instanceId ? ` instance=${d.instanceId} execution=${d.executionId}` : ''
      const attempts = d.attemptCount != null ? ` attempts=${d.attemptCount}/${d.maxAttempts}` : ''
      console.log(`[event ${kind}] queue=${d.queue}${where}${attempts} message=${d.messageKind ?? '-'}: ${d.reason}`)
    })
  }

  await runtime.start()
  console.log(`runtime: started (maxAttempts = ${MAX_ATTEMPTS})`)
  const client = new Client(provider)
  const run = `${Date.now()}-${process.pid}`
  const onboardId = `onboard-${run}`
  const flakyId = `flaky-import-${run}`
  try {
    await client.startOrchestration(onboardId, onboardCustomer, { customerId: `c${run}`, name: 'Ada Lovelace', email: ' Ada@Example.org ' })
    await client.startOrchestration(flakyId, flakyImport, `batch-${run}`)
    console.log(`client: started ${onboardId} and ${flakyId}`)

    // An event raised before its wait is bound is dropped: wait for the custom status that is
    // committed in the same turn as the wait.
    const deadline = Date.now() + WAIT_MS
    while ((await client.getStatus(onboardId)).customStatus !== 'awaiting-approval') {
      if (Date.now() > deadline) throw new Error(`${onboardId} never reached awaiting-approval`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await client.raiseEvent(onboardId, 'Approved', 'ops@example.org')
    console.log(`client: raised Approved on ${onboardId}`)

    const onboard = await client.waitForOrchestration(onboardId, WAIT_MS, { orchestration: onboardCustomer })
    const flaky = await client.waitForOrchestration(flakyId, WAIT_MS, { orchestration: flakyImport })
    // Events travel on their own channel; give the poison event a moment to arrive.
    const eventDeadline = Date.now() + 5000
    while (!events.some((e) => e.instanceId === flakyId && POISON_KINDS.has(e.kind)) && Date.now() < eventDeadline) {
      await new Promise((r) => setTimeout(r, 20))
    }

    console.log('final status:')
    console.log(`  ${onboardId}: ${describe(onboard)}`)
    console.log(`  ${flakyId}: ${describe(flaky)}`)
    const checks = [
      ['OnboardCustomer completed', onboard.status === 'Completed' && onboard.output?.approvedBy === 'ops@example.org'],
      ['FlakyImport failed as poison', flaky.status === 'Failed' && flaky.errorCategory === 'poison'],
      ['a poison event was emitted for FlakyImport', events.some((e) => e.instanceId === flakyId && POISON_KINDS.has(e.kind))],
      ['no poisonLost event', !events.some((e) => e.kind === 'poisonLost')],
    ]
    for (const [what, ok] of checks) console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`)
    const ok = checks.every(([, passed]) => passed)
    console.log(ok ? 'result: OK' : 'result: FAILED')
    return ok ? 0 : 1
  } finally {
    await runtime.shutdown(2000)
    if (provider.close) await provider.close()
    console.log('runtime: stopped')
  }
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (e) => {
    console.error(`error: ${e.message}`)
    process.exitCode = 2
  },
)
