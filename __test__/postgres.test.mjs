// PostgreSQL specifics: connect variants, session-free polling, the runtime's own pool with
// claim options, and connection errors that never echo the URL.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { steadfast, DATABASE_URL, FAST, uid, pgSchema } from './helpers.mjs'

const { PostgresProvider, Runtime, Client } = steadfast
const schemas = []

after(async () => {
  for (const s of schemas) await s.drop()
})

async function schema() {
  const s = await pgSchema('pg')
  schemas.push(s)
  return s.schema
}

test('connectWithSchema creates the schema; kind and schema are reported', async () => {
  const name = await schema()
  const provider = await PostgresProvider.connectWithSchema(DATABASE_URL, name)
  try {
    assert.equal(provider.kind, 'postgres')
    assert.equal(provider.schema, name)
    assert.deepEqual(await new Client(provider).listAllInstances(), [])
  } finally {
    await provider.close()
  }
})

test('session-free polling with claim options runs a workflow', async () => {
  const provider = await PostgresProvider.connectWithOptions({
    url: DATABASE_URL,
    schema: await schema(),
    polling: 'sessionFree',
    maxConnections: 3,
    acquireTimeoutMs: 5000,
    statementLockTimeoutMs: 1000,
    runMigrations: true,
  })
  const rt = new Runtime(provider, { ...FAST, fetchFanout: 1, maxClaimAttempts: 2, maxClaimDurationMs: 500, longPollRecheckMs: 50, maxAttempts: 4 })
  rt.registerActivity('Double', async (_ctx, n) => n * 2)
  rt.registerOrchestration('Twice', function* (ctx, n) {
    const a = yield ctx.scheduleActivity('Double', n)
    const [b] = yield ctx.all([ctx.scheduleActivity('Double', a)])
    return b.ok
  })
  await rt.start()
  try {
    const client = new Client(provider)
    const id = uid('twice')
    await client.startOrchestration(id, 'Twice', 5)
    const s = await client.waitForOrchestration(id, 20_000)
    assert.equal(s.status, 'Completed', s.error)
    assert.equal(s.output, 20)
  } finally {
    await rt.shutdown(2000)
    await provider.close()
  }
})

test('connection failures reject with ERR_STEADFAST_PROVIDER_OPEN and hide the URL', async () => {
  await assert.rejects(
    PostgresProvider.connectWithOptions({ url: 'postgres://someone:hunter2@127.0.0.1:1/none', acquireTimeoutMs: 2000 }),
    (e) => {
      assert.equal(e.code, 'ERR_STEADFAST_PROVIDER_OPEN')
      assert.doesNotMatch(e.message, /hunter2/)
      return true
    },
  )
})
