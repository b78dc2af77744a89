// Runtime life cycle: registration errors throw at the call, start() errors are rejections
// (never a panic or an abort), and runtimes in one process do not share orchestrations.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { steadfast, FAST, uid } from './helpers.mjs'

const require = createRequire(import.meta.url)

const { Runtime, Client, SqliteProvider } = steadfast

test('bad or duplicate versions throw at registration', async () => {
  const rt = new Runtime(await SqliteProvider.inMemory(), FAST)
  assert.throws(() => rt.registerOrchestrationVersioned('O', '1.0', function* () {}), /version must be a semantic version like "1\.2\.0" \(got "1\.0"\)/)
  assert.throws(() => rt.registerOrchestrationVersioned('O', 'v2.0.0', function* () {}), TypeError)
  rt.registerOrchestration('O', function* () {})
  assert.throws(() => rt.registerOrchestrationVersioned('O', '1.0.0', function* () {}), /version 1\.0\.0 is already registered/)
  assert.throws(() => rt.registerOrchestration('P', async () => 1), /must be a generator function/)
  assert.throws(() => rt.registerActivity('__duroxide_syscall:x', async () => 1), /reserved/)
  rt.registerActivity('A', async () => 1)
  assert.throws(() => rt.registerActivity('A', async () => 1), /already registered/)
})

test("duroxide-node's typed registration names register the same way", async () => {
  const provider = await SqliteProvider.inMemory()
  const rt = new Runtime(provider, FAST)
  assert.equal(rt.registerActivityTyped('Double', async (_ctx, n) => ({ n: n * 2 })), rt)
  assert.equal(rt.registerOrchestrationTyped('T', function* (ctx, n) {
    return yield ctx.scheduleActivityTyped('Double', n)
  }), rt)
  assert.equal(rt.registerOrchestrationVersionedTyped('T', '2.0.0', function* (ctx) {
    return ctx.orchestrationVersion
  }), rt)
  assert.throws(() => rt.registerActivityTyped('Double', async () => 1), /already registered/)
  assert.throws(() => rt.registerOrchestrationVersionedTyped('T', '2.0', function* () {}), /semantic version/)
  await rt.start()
  try {
    const client = new Client(provider)
    const v1 = uid('t')
    const v2 = uid('t')
    await client.startOrchestrationVersioned(v1, 'T', 21, '1.0.0')
    await client.startOrchestration(v2, 'T')
    assert.deepEqual(await client.waitForOrchestrationTyped(v1, 10_000), { n: 42 })
    assert.equal(await client.waitForOrchestrationTyped(v2, 10_000), '2.0.0')
  } finally {
    await rt.shutdown()
  }
})

test('versions may be registered in any order (sorted before duroxide sees them)', async () => {
  const provider = await SqliteProvider.inMemory()
  const rt = new Runtime(provider, FAST)
  rt.registerOrchestrationVersioned('V', '2.0.0', function* (ctx) {
    return ctx.orchestrationVersion
  })
  rt.registerOrchestrationVersioned('V', '1.5.0', function* (ctx) {
    return ctx.orchestrationVersion
  })
  await rt.start()
  try {
    const client = new Client(provider)
    const latest = uid('v')
    const pinned = uid('v')
    await client.startOrchestration(latest, 'V')
    await client.startOrchestrationVersioned(pinned, 'V', null, '1.5.0')
    assert.equal((await client.waitForOrchestration(latest, 10_000)).output, '2.0.0')
    assert.equal((await client.waitForOrchestration(pinned, 10_000)).output, '1.5.0')
  } finally {
    await rt.shutdown()
  }
})

test('start() rejects instead of panicking when the native layer gets a bad version', async () => {
  const rt = new Runtime(await SqliteProvider.inMemory(), FAST)
  // Bypass the JS checks to reach the Rust backstop (duroxide itself would panic).
  rt._native.registerOrchestration('Bad', 'not-semver')
  await assert.rejects(rt.start(), (e) => {
    assert.equal(e.code, 'ERR_STEADFAST_REGISTRATION')
    assert.match(e.message, /orchestration "Bad": version "not-semver" is not valid semver/)
    return true
  })
  const rt2 = new Runtime(await SqliteProvider.inMemory(), FAST)
  rt2._native.registerOrchestration('Dup', '1.0.0')
  rt2._native.registerOrchestration('Dup', '1.0.0')
  await assert.rejects(rt2.start(), /registered twice/)
})

test('the native layer re-checks options that would make duroxide panic', async () => {
  const native = require('../index.js')
  const provider = await SqliteProvider.inMemory()
  assert.throws(
    () => new native.NativeRuntime(provider._native, { sessionIdleTimeoutMs: 1000 }),
    /\[ERR_STEADFAST_INVALID_OPTIONS\] sessionIdleTimeoutMs \(1000 ms\) must be greater than/,
  )
  assert.throws(() => new native.NativeRuntime(provider._native, { workerTagFilter: 'tags', workerTagFilterTags: [] }), /workerTagFilter\.tags needs between 1 and 5 tags/)
})

test('start() twice and start() after shutdown reject with ERR_STEADFAST_INVALID_STATE', async () => {
  const rt = new Runtime(await SqliteProvider.inMemory(), FAST)
  rt.registerOrchestration('O', function* () {
    return 1
  })
  await rt.start()
  await assert.rejects(rt.start(), { code: 'ERR_STEADFAST_INVALID_STATE', message: 'runtime already started' })
  assert.throws(() => rt.registerActivity('Late', async () => 1), { code: 'ERR_STEADFAST_INVALID_STATE' })
  await rt.shutdown()
  await rt.shutdown()
  await assert.rejects(rt.start(), { code: 'ERR_STEADFAST_INVALID_STATE' })
  assert.equal(rt.metricsSnapshot(), null)
})

test('orchestration registries are per Runtime', async () => {
  const p1 = await SqliteProvider.inMemory()
  const p2 = await SqliteProvider.inMemory()
  const r1 = new Runtime(p1, FAST)
  const r2 = new Runtime(p2, FAST)
  r1.registerOrchestration('Same', function* () {
    return 'one'
  })
  r2.registerOrchestration('Same', function* () {
    return 'two'
  })
  await Promise.all([r1.start(), r2.start()])
  try {
    const id = uid('same')
    await new Client(p1).startOrchestration(id, 'Same')
    await new Client(p2).startOrchestration(id, 'Same')
    assert.equal((await new Client(p1).waitForOrchestration(id, 10_000)).output, 'one')
    assert.equal((await new Client(p2).waitForOrchestration(id, 10_000)).output, 'two')
  } finally {
    await Promise.all([r1.shutdown(), r2.shutdown()])
  }
})

test('a context used outside its turn throws ERR_STEADFAST_INVALID_STATE', async () => {
  const provider = await SqliteProvider.inMemory()
  const rt = new Runtime(provider, FAST)
  let leaked
  rt.registerOrchestration('Leak', function* (ctx) {
    leaked = ctx
    return 'done'
  })
  await rt.start()
  try {
    const id = uid('leak')
    await new Client(provider).startOrchestration(id, 'Leak')
    await new Client(provider).waitForOrchestration(id, 10_000)
    assert.throws(() => leaked.setCustomStatus('late'), { code: 'ERR_STEADFAST_INVALID_STATE' })
  } finally {
    await rt.shutdown()
  }
})

test('SQLite files are created on open', async () => {
  const os = await import('node:os')
  const path = await import('node:path')
  const fs = await import('node:fs')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'steadfast-'))
  const file = path.join(dir, 'nested', 'db.sqlite')
  try {
    const provider = await SqliteProvider.open(file)
    assert.equal(provider.kind, 'sqlite')
    assert.ok(fs.existsSync(file))
    await new Client(provider).listAllInstances()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('an instance survives a runtime restart: history is replayed, activities are not rerun', async () => {
  const os = await import('node:os')
  const path = await import('node:path')
  const fs = await import('node:fs')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'steadfast-restart-'))
  const file = path.join(dir, 'restart.db')
  let charged = 0
  const define = (rt) => {
    rt.registerActivity('Charge', async (_ctx, amount) => {
      charged += 1
      return { charged: amount }
    })
    rt.registerOrchestration('Checkout', function* (ctx, amount) {
      const receipt = yield ctx.scheduleActivity('Charge', amount)
      ctx.setCustomStatus('awaiting-shipment')
      const shipment = yield ctx.waitForEvent('Shipped')
      return { receipt, shipment }
    })
  }
  try {
    const id = uid('checkout')
    const first = await SqliteProvider.open(file)
    const rt1 = new Runtime(first, FAST)
    define(rt1)
    await rt1.start()
    const c1 = new Client(first)
    await c1.startOrchestration(id, 'Checkout', 42)
    const deadline = Date.now() + 10_000
    while ((await c1.getStatus(id)).customStatus !== 'awaiting-shipment') {
      assert.ok(Date.now() < deadline, 'never reached awaiting-shipment')
      await new Promise((r) => setTimeout(r, 20))
    }
    await rt1.shutdown()

    const second = await SqliteProvider.open(file)
    const rt2 = new Runtime(second, FAST)
    define(rt2)
    await rt2.start()
    try {
      const c2 = new Client(second)
      await c2.raiseEvent(id, 'Shipped', { carrier: 'post' })
      const s = await c2.waitForOrchestration(id, 10_000)
      assert.equal(s.status, 'Completed', s.error)
      assert.deepEqual(s.output, { receipt: { charged: 42 }, shipment: { carrier: 'post' } })
      assert.equal(charged, 1, 'the activity ran once; the second runtime replayed its result')
    } finally {
      await rt2.shutdown()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
