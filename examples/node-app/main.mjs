// steadfast example app for Node.js (the counterpart of examples/rust-app).
//
// * OnboardCustomer: two activities, a durable timer, then waits for the external event
//   `Approved` (raised below once the orchestration reports it is waiting). Expected: Completed.
// * FlakyImport: schedules an activity no worker here can run. It is redelivered until its
//   attempt count passes maxAttempts (3) and the runtime fails it as poison; the Runtime
//   emits a `poisoned` event. Expected: Failed (poison).
//
// Storage: PostgreSQL when --database-url URL is given or STEADFAST_DATABASE_URL is set
// (schema steadfast_example_node), else a SQLite file under target/steadfast-example/.
// Exit status: 0 when both ended as expected, 1 when not, 2 on a setup error.
//
// Run: npx napi build --platform && node examples/node-app/main.mjs [--database-url URL]

import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const require = createRequire(import.meta.url)
const { SqliteProvider, PostgresProvider, Client, Runtime } = require('../../lib/index.js')

const MAX_ATTEMPTS = 3
const WAIT_MS = 15_000

function databaseUrl(argv) {
  const i = argv.indexOf('--database-url')
  if (i >= 0) return argv[i + 1]
  const inline = argv.find((a) => a.startsWith('--database-url='))
  if (inline) return inline.slice('--database-url='.length)
  return process.env.STEADFAST_DATABASE_URL || undefined
}

async function openProvider(url) {
  if (url) {
    console.log('provider: PostgreSQL via steadfast-pg (schema steadfast_example_node)')
    return PostgresProvider.connectWithSchema(url, 'steadfast_example_node')
  }
  const here = path.dirname(fileURLToPath(import.meta.url))
  const file = path.join(here, '../../target/steadfast-example/node-example.db')
  console.log(`provider: embedded SQLite at ${path.resolve(file)}`)
  return SqliteProvider.open(file)
}

function describe(s) {
  if (s.status === 'Completed') return `Completed: ${JSON.stringify(s.output)}`
  if (s.status === 'Failed') return `Failed [${s.errorCategory}]: ${s.error}`
  return s.status
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

  runtime.registerActivity('ValidateEmail', async (_ctx, email) => email.trim().toLowerCase())
  runtime.registerActivity('CreateAccount', async (ctx, customer) => {
    ctx.traceInfo(`creating account for ${customer.customerId}`)
    return { accountId: `acct-${customer.customerId}` }
  })
  runtime.registerActivity('SendWelcome', async (_ctx, { email }) => `welcome sent to ${email}`)

  runtime.registerOrchestration('OnboardCustomer', function* (ctx, customer) {
    const email = yield ctx.scheduleActivity('ValidateEmail', customer.email)
    const account = yield ctx.scheduleActivity('CreateAccount', customer)
    yield ctx.scheduleTimer(1000)
    ctx.setCustomStatus('awaiting-approval')
    const approval = yield ctx.race(ctx.waitForEvent('Approved'), ctx.scheduleTimer(20_000))
    if (approval.index !== 0) throw new Error('approval timed out')
    const welcome = yield ctx.scheduleActivity('SendWelcome', { email })
    return { ...account, approvedBy: approval.value, welcome }
  })
  // No handler for ImportLegacyRows is registered: it can only end as poison.
  runtime.registerOrchestration('FlakyImport', function* (ctx, batch) {
    return yield ctx.scheduleActivity('ImportLegacyRows', batch)
  })

  runtime.on('diagnostic', (d) => {
    console.log(`[diagnostic] ${d.kind} instance=${d.instanceId} attempts=${d.attemptCount}/${d.maxAttempts}: ${d.reason}`)
  })

  await runtime.start()
  console.log(`runtime: started (maxAttempts = ${MAX_ATTEMPTS})`)
  const client = new Client(provider)
  const run = `${Date.now()}-${process.pid}`
  const onboardId = `onboard-${run}`
  const flakyId = `flaky-import-${run}`
  try {
    await client.startOrchestration(onboardId, 'OnboardCustomer', { customerId: `c${run}`, name: 'Ada Lovelace', email: 'Ada@Example.org' })
    await client.startOrchestration(flakyId, 'FlakyImport', `batch-${run}`)
    console.log(`client: started ${onboardId} and ${flakyId}`)

    // A positional event raised before its wait is bound is dropped: wait for the status
    // committed in the same turn as the wait.
    const deadline = Date.now() + WAIT_MS
    while ((await client.getStatus(onboardId)).customStatus !== 'awaiting-approval') {
      if (Date.now() > deadline) throw new Error(`${onboardId} never reached awaiting-approval`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await client.raiseEvent(onboardId, 'Approved', 'ops@example.org')
    console.log(`client: raised Approved on ${onboardId}`)

    const onboard = await client.waitForOrchestration(onboardId, WAIT_MS)
    const flaky = await client.waitForOrchestration(flakyId, WAIT_MS)
    console.log('final status:')
    console.log(`  ${onboardId}: ${describe(onboard)}`)
    console.log(`  ${flakyId}: ${describe(flaky)}`)
    const ok = onboard.status === 'Completed' && flaky.status === 'Failed' && flaky.errorCategory === 'poison'
    console.log(ok ? 'result: OK (OnboardCustomer completed, FlakyImport failed as poison)' : 'result: FAILED')
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
