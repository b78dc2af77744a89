// Runtime.metrics() and Runtime.serveMetrics(): the Prometheus scrape after real work on
// PostgreSQL (completed, poisoned and misdirected messages) and on SQLite, checked against
// docs/metrics.md, and the HTTP listener's answers, options and lifetime.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { POISON_FAST, FAST, backends, runtimeOn, steadfast, uid, until } from './helpers.mjs'

const DOCS = readFileSync(new URL('../docs/metrics.md', import.meta.url), 'utf8')
const DOCUMENTED = new Map(
  [...DOCS.matchAll(/^\| `((?:steadfast|duroxide)_\w+)` \| (counter|gauge|histogram) \|/gm)].map((m) => [m[1], m[2]]),
)

/** A scrape's samples: [{ name, labels, value }], and its `# TYPE` lines: name → type. */
function parse(text) {
  const samples = []
  const types = new Map()
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\w+) (\w+)$/.exec(line)
    if (type) types.set(type[1], type[2])
    if (line === '' || line.startsWith('#')) continue
    const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(m, `not a sample line: ${line}`)
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]))
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return { samples, types }
}

/** The sum of the samples named `name` whose labels include `labels`. */
function total(scrape, name, labels = {}) {
  return scrape.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}

/** The metric a sample belongs to (a histogram's _bucket/_sum/_count lines belong to it). */
function family(scrape, name) {
  const base = name.replace(/_(bucket|sum|count)$/, '')
  return scrape.types.has(base) ? base : name
}

function register(rt) {
  rt.registerActivity('Echo', async (_ctx, x) => x)
  rt.registerOrchestration('Hello', function* (ctx, x) {
    return yield ctx.scheduleActivity('Echo', x)
  })
  rt.registerOrchestration('CallsNobody', function* (ctx) {
    return yield ctx.scheduleActivity('NotRegistered', 1)
  })
}

const [sqlite, postgres] = backends('metrics')

describe('metrics() on PostgreSQL after real work', { timeout: 60_000 }, () => {
  const fx = runtimeOn(postgres, POISON_FAST, register)

  test('the scrape has the documented names with non-zero values', async () => {
    const done = uid('hello')
    await fx.client.startOrchestration(done, 'Hello', 'hi')
    assert.equal((await fx.client.waitForOrchestration(done, 20_000)).status, 'Completed')
    const poisoned = uid('poison')
    await fx.client.startOrchestration(poisoned, 'CallsNobody', null)
    await until(async () => (await fx.client.getStatus(poisoned)).status === 'Failed', 20_000, 'the poisoned instance failed')
    // An event for an instance nobody started: a ready message that no claim takes.
    await fx.client.raiseEvent(uid('never-started'), 'Ping', 1)

    const scrape = parse(await fx.runtime.metrics())
    assert.ok(total(scrape, 'steadfast_claims_total', { queue: 'orchestrator', outcome: 'claimed' }) > 0)
    assert.ok(total(scrape, 'steadfast_claims_total', { queue: 'worker', outcome: 'claimed' }) > 0)
    assert.ok(total(scrape, 'steadfast_claim_duration_seconds_count', { queue: 'orchestrator' }) > 0)
    assert.ok(total(scrape, 'steadfast_redeliveries_total', { queue: 'worker' }) > 0, 'the unregistered activity was redelivered')
    assert.ok(total(scrape, 'steadfast_diagnostics_total', { event: 'steadfast.poison_committed', queue: 'worker' }) > 0)
    assert.ok(total(scrape, 'steadfast_queue_messages', { queue: 'orchestrator', state: 'ready' }) >= 1)
    assert.ok(total(scrape, 'steadfast_queue_oldest_ready_age_seconds', { queue: 'orchestrator' }) > 0)
    assert.ok(total(scrape, 'steadfast_dead_letters', { queue: 'worker' }) >= 1)
    assert.ok(total(scrape, 'duroxide_orchestration_starts_total', { orchestration_name: 'Hello' }) > 0)
    assert.ok(total(scrape, 'duroxide_orchestration_completions_total', { orchestration_name: 'Hello' }) > 0)
    assert.ok(total(scrape, 'duroxide_activity_executions_total', { activity_name: 'Echo' }) > 0)
  })

  test('every metric scraped is documented with its type', async () => {
    const scrape = parse(await fx.runtime.metrics())
    const names = new Set(scrape.samples.map((s) => family(scrape, s.name)))
    assert.ok(names.size > 10, `only ${names.size} metrics scraped`)
    for (const name of names) {
      assert.ok(DOCUMENTED.has(name), `${name} is scraped but not in docs/metrics.md`)
      if (scrape.types.has(name)) assert.equal(scrape.types.get(name), DOCUMENTED.get(name), `${name}'s type`)
    }
  })

  test('serveMetrics answers GET and HEAD on its path, 404 and 405 otherwise', async () => {
    const server = await fx.runtime.serveMetrics({ port: 0 })
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
      const res = await fetch(server.url)
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
      assert.ok(total(parse(await res.text()), 'steadfast_claims_total') > 0)
      assert.equal((await fetch(server.url, { method: 'HEAD' })).status, 200)
      assert.equal((await fetch(new URL('/other', server.url))).status, 404)
      const post = await fetch(server.url, { method: 'POST' })
      assert.equal(post.status, 405)
      assert.equal(post.headers.get('allow'), 'GET, HEAD')
    } finally {
      await server.close()
    }
    await assert.rejects(fetch(server.url), 'closed')
  })

  test('serveMetrics checks its options and reports a port in use', async () => {
    await assert.rejects(fx.runtime.serveMetrics({ prot: 1 }), (e) => e instanceof TypeError && /options\.prot/.test(e.message))
    await assert.rejects(fx.runtime.serveMetrics({ port: 70_000 }), (e) => e instanceof RangeError && /options\.port/.test(e.message))
    await assert.rejects(fx.runtime.serveMetrics({ host: 1 }), (e) => e instanceof TypeError && /options\.host/.test(e.message))
    await assert.rejects(fx.runtime.serveMetrics({ path: 'metrics' }), (e) => e instanceof RangeError && /options\.path must start with "\/"/.test(e.message))
    const first = await fx.runtime.serveMetrics({ port: 0 })
    try {
      await assert.rejects(fx.runtime.serveMetrics({ port: first.port }), (e) => e.code === 'EADDRINUSE')
    } finally {
      await first.close()
    }
  })
})

describe('metrics() on SQLite', { timeout: 60_000 }, () => {
  const fx = runtimeOn(sqlite, FAST, register)

  test("has duroxide's metrics", async () => {
    const id = uid('hello')
    await fx.client.startOrchestration(id, 'Hello', 'hi')
    assert.equal((await fx.client.waitForOrchestration(id, 20_000)).status, 'Completed')
    const scrape = parse(await fx.runtime.metrics())
    assert.ok(total(scrape, 'duroxide_orchestration_completions_total', { orchestration_name: 'Hello' }) > 0)
  })
})

describe('serveMetrics() lives until shutdown', { timeout: 60_000 }, () => {
  test('shutdown closes the listener', async () => {
    const env = await sqlite.open()
    const rt = new steadfast.Runtime(env.provider, FAST)
    register(rt)
    await rt.start()
    const server = await rt.serveMetrics({ port: 0 })
    assert.equal((await fetch(server.url)).status, 200)
    await rt.shutdown(2000)
    await assert.rejects(fetch(server.url))
    await env.cleanup()
  })
})
