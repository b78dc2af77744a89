// The web console (`steadfast console`, lib/console/), run as a child process against a real
// PostgreSQL schema that a real runtime filled (running, completed, failed, poisoned and
// dead-lettered instances, a tree of sub-orchestrations, and one whose id is HTML): its JSON
// API (filters, paging, 400/404/403, no credential in any response), its read-only database
// sessions, requeue behind --allow-writes, and the page itself in headless Chromium.
// STEADFAST_CONSOLE_SCREENSHOTS=1 saves screenshots of the page into docs/.
import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { DATABASE_URL, POISON_FAST, uid, until, runtimeOn } from './helpers.mjs'
import { operatorBackend, operatorSampleIds, populate, registerOperatorSamples } from './operator-store.mjs'

const require = createRequire(import.meta.url)
const { chromium } = require('playwright-core')
const { parseStoreUrl, openStore } = require('../lib/cli/store.js')
const consoleCommand = require('../lib/cli/commands/console.js')

const BIN = fileURLToPath(new URL('../bin/steadfast.js', import.meta.url))
const CHROMIUM = process.env.STEADFAST_CHROMIUM || '/usr/bin/chromium'
const SCREENSHOTS = process.env.STEADFAST_CONSOLE_SCREENSHOTS === '1'
const SECRET = 'c0ns0le-s3cret'
const HTML_ID = '<img src=x onerror=alert(1)>'
const URL_WITH_PASSWORD = (() => {
  const u = new URL(DATABASE_URL)
  u.password = SECRET // the test server trusts every local connection: the password is only carried
  return u.toString()
})()

/** `steadfast console ...args` as a child process; resolves once it prints its address. */
async function startConsole(schema, ...args) {
  const child = spawn(process.execPath, [BIN, 'console', '--url', URL_WITH_PASSWORD, '--schema', schema, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const out = { stdout: '', stderr: '' }
  child.stderr.on('data', (d) => (out.stderr += d))
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const lines = createInterface({ input: child.stdout })
  const url = await new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      out.stdout += `${line}\n`
      const m = /listening on (http:\/\/\S+)/.exec(line)
      if (m) resolve(m[1])
    })
    exited.then(({ code }) => reject(new Error(`console exited (${code}) before listening:\n${out.stdout}${out.stderr}`)))
  })
  return {
    url,
    out,
    async stop(signal) {
      child.kill(signal)
      return exited
    },
  }
}

/** Every response body the test read, checked for credentials at the end. */
const bodies = []

async function request(base, path, init) {
  const res = await fetch(new URL(path, base), init)
  const text = await res.text()
  bodies.push(`${path}: ${text}`)
  return { status: res.status, headers: res.headers, text, json: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined }
}

async function assertStatus(base, path, status, pattern, init) {
  const r = await request(base, path, init)
  assert.equal(r.status, status, `${path}: ${r.status} ${r.text}`)
  if (pattern) assert.match(r.json.error.message, pattern, path)
  return r
}

/** Save a screenshot of `page` to docs/NAME when STEADFAST_CONSOLE_SCREENSHOTS=1. */
async function screenshot(page, name) {
  if (SCREENSHOTS) await page.screenshot({ path: fileURLToPath(new URL(`../docs/${name}`, import.meta.url)), fullPage: true })
}

function registerAll(rt) {
  registerOperatorSamples(rt)
  rt.registerOrchestration('Naps', function* (ctx, ms) {
    yield ctx.scheduleTimer(ms)
    return 'rested'
  })
}

describe('steadfast console', { timeout: 300_000 }, () => {
  const backend = operatorBackend('console')
  const fx = runtimeOn(backend, POISON_FAST, registerAll)
  const ids = operatorSampleIds()
  let readOnly
  let writable
  let browser

  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM })
  })

  after(async () => {
    await browser?.close()
    await readOnly?.stop('SIGKILL')
    await writable?.stop('SIGKILL')
  })

  test('set-up: the runtime fills the schema, two consoles serve it', async () => {
    await populate(fx.client, ids)
    await fx.client.startOrchestration(HTML_ID, 'Greet', '<b>bold</b>')
    assert.equal((await fx.client.waitForOrchestration(HTML_ID, 30_000)).status, 'Completed')
    readOnly = await startConsole(backend.schema, '--sample-ms', '200')
    writable = await startConsole(backend.schema, '--sample-ms', '200', '--allow-writes')
    assert.match(readOnly.url, /^http:\/\/127\.0\.0\.1:\d+\/$/)
    assert.match(readOnly.out.stdout, /\(read-only\)/)
    assert.match(writable.out.stdout, /\(writes allowed\)/)
  })

  test('API: instances filtered by status and name, paged with the cursor', async () => {
    const all = (await request(readOnly.url, '/api/instances?limit=100')).json
    assert.equal(all.instances.length, 9)
    assert.equal(all.nextCursor, null)
    const failed = (await request(readOnly.url, '/api/instances?status=Failed')).json
    assert.deepEqual(failed.instances.map((i) => i.instanceId).sort(), [ids.failed, ids.poisoned].sort())
    const running = (await request(readOnly.url, '/api/instances?status=running')).json
    assert.deepEqual(running.instances.map((i) => i.instanceId), [ids.waiting])
    const children = (await request(readOnly.url, '/api/instances?name=Child')).json
    assert.equal(children.instances.length, 3)
    assert.ok(children.instances.every((i) => i.orchestrationName === 'Child'))

    const walked = []
    let path = '/api/instances?limit=4'
    for (;;) {
      const page = (await request(readOnly.url, path)).json
      assert.ok(page.instances.length <= 4)
      walked.push(...page.instances.map((i) => i.instanceId))
      if (page.nextCursor === null) break
      path = `/api/instances?limit=4&cursor=${encodeURIComponent(page.nextCursor)}`
    }
    assert.deepEqual(walked, all.instances.map((i) => i.instanceId))
  })

  test('API: one instance, its history and its tree', async () => {
    const base = readOnly.url
    const done = (await request(base, `/api/instances/${encodeURIComponent(ids.done)}`)).json
    assert.equal(done.instance.status, 'Completed')
    assert.equal(done.status.output, 'hello Ada')
    assert.equal(done.executions.length, 1)
    const poisoned = (await request(base, `/api/instances/${encodeURIComponent(ids.poisoned)}`)).json
    assert.equal(poisoned.status.errorCategory, 'poison')
    const history = (await request(base, `/api/instances/${encodeURIComponent(ids.done)}/history?execution=1`)).json
    const kinds = history.events.map((e) => e.kind)
    assert.equal(kinds[0], 'OrchestrationStarted')
    assert.ok(kinds.includes('ActivityScheduled') && kinds.includes('ActivityCompleted'), kinds.join(' '))
    const tree = (await request(base, `/api/instances/${encodeURIComponent(ids.parent)}/tree`)).json
    assert.equal(tree.size, 4)
    assert.deepEqual(tree.tree.children.map((c) => c.instanceId), [`${ids.parent}-a`, `${ids.parent}-b`])
    const html = (await request(base, `/api/instances/${encodeURIComponent(HTML_ID)}`)).json
    assert.equal(html.instance.instanceId, HTML_ID)
  })

  test('API: 400 names the parameter and the rule, 404 for what is not there, 405 for the wrong method', async () => {
    const base = readOnly.url
    await assertStatus(base, '/api/instances?limit=0', 400, /^query parameter limit must be an integer between 1 and 1000 \(got 0\)$/)
    await assertStatus(base, '/api/instances?limit=abc', 400, /query parameter limit must be an integer/)
    await assertStatus(base, '/api/instances?status=Done', 400, /query parameter status must be one of Running, Completed, Failed, ContinuedAsNew/)
    await assertStatus(base, '/api/instances?cursor=zz', 400, /cursor/)
    await assertStatus(base, '/api/instances?color=red', 400, /unknown query parameter color \(known: status, name, limit, cursor\)/)
    await assertStatus(base, '/api/instances?limit=1&limit=2', 400, /query parameter limit given more than once/)
    await assertStatus(base, '/api/instances?name=', 400, /query parameter name must not be empty/)
    await assertStatus(base, `/api/instances/${ids.done}/history?execution=0`, 400, /query parameter execution must be an integer between 1 and/)
    await assertStatus(base, '/api/dead-letters?limit=10001', 400, /query parameter limit must be an integer between 1 and 10000/)
    await assertStatus(base, '/api/dead-letters/x', 400, /dead letter id in the path must be an integer/)
    await assertStatus(base, '/api/samples?since=yesterday', 400, /query parameter since must be an integer/)
    await assertStatus(base, '/api/config?verbose=1', 400, /unknown query parameter verbose \(this path takes none\)/)

    await assertStatus(base, '/api/instances/no-such-instance', 404, /there is no instance "no-such-instance"/)
    await assertStatus(base, `/api/instances/${ids.done}/history?execution=2`, 404, /has no execution 2/)
    await assertStatus(base, '/api/dead-letters/999999', 404, /there is no dead letter 999999/)
    await assertStatus(base, '/api/nothing', 404, /there is no API path/)
    const page = await request(base, '/no/such/page')
    assert.equal(page.status, 404)
    const wrongMethod = await assertStatus(base, '/api/instances', 405, /POST is not allowed here/, { method: 'POST' })
    assert.equal(wrongMethod.headers.get('allow'), 'GET')
    // A page of another site that rebinds its name to 127.0.0.1 is not answered.
    const rebound = await new Promise((resolve, reject) => {
      http.get(new URL('/api/config', base), { headers: { host: 'attacker.example' } }, (res) => resolve(res.statusCode)).on('error', reject)
    })
    assert.equal(rebound, 421)
  })

  test('API: samples of queue depths, instance counts and dead letters', async () => {
    await until(async () => (await request(readOnly.url, '/api/samples')).json.samples.length >= 3, 10_000, 'three samples')
    const { sampleMs, capacity, samples } = (await request(readOnly.url, '/api/samples')).json
    assert.equal(sampleMs, 200)
    assert.equal(capacity, 900)
    const last = samples.at(-1)
    assert.deepEqual(Object.keys(last.queues).sort(), ['orchestratorQueue', 'timerQueue', 'workerQueue'])
    assert.equal(last.metrics.totalInstances, 9)
    assert.equal(last.metrics.runningInstances, 1)
    assert.equal(last.deadLetters, 1)
    assert.ok(samples.every((s, i) => i === 0 || s.at > samples[i - 1].at))
    const newer = (await request(readOnly.url, `/api/samples?since=${samples.at(-2).at}`)).json.samples
    assert.equal(newer[0].at, last.at)
  })

  test('API: dead letters are read; without --allow-writes requeue and purge are refused with 403', async () => {
    const base = readOnly.url
    const config = (await request(base, '/api/config')).json
    assert.deepEqual(config, { storeKind: 'postgres', schema: backend.schema, writesAllowed: false, sampleMs: 200 })
    const { deadLetters } = (await request(base, '/api/dead-letters')).json
    assert.equal(deadLetters.length, 1)
    assert.equal(deadLetters[0].instanceId, ids.poisoned)
    const letter = (await request(base, `/api/dead-letters/${deadLetters[0].id}`)).json
    assert.equal(letter.reason, 'poison')
    const write = { method: 'POST', headers: { 'x-steadfast-console': '1' } }
    await assertStatus(base, `/api/dead-letters/${letter.id}/requeue`, 403, /started without --allow-writes/, write)
    await assertStatus(base, '/api/dead-letters/purge', 403, /started without --allow-writes/, write)
    assert.equal((await fx.client.listDeadLetters()).length, 1, 'the dead letter is still there')
  })

  test("the console's read-only store refuses writes in the database", async () => {
    const options = consoleCommand.storeOptions(consoleCommand.parse({}))
    const store = await openStore(parseStoreUrl(URL_WITH_PASSWORD), backend.schema, options)
    try {
      await assert.rejects(store.client.cancelInstance(ids.waiting, 'must not be written'), /read-only transaction/)
      const [letter] = await store.client.listDeadLetters()
      await assert.rejects(store.client.requeueDeadLetter(letter.id), /read-only transaction/)
    } finally {
      await store.close()
    }
    assert.equal((await fx.client.getStatus(ids.waiting)).status, 'Running')
    assert.equal((await fx.client.listDeadLetters()).length, 1)
  })

  test('API with --allow-writes: requeue needs the page header, then puts the letter back on its queue', async () => {
    const base = writable.url
    assert.equal((await request(base, '/api/config')).json.writesAllowed, true)
    const [letter] = (await request(base, '/api/dead-letters')).json.deadLetters
    await assertStatus(base, `/api/dead-letters/${letter.id}/requeue`, 403, /must carry the header x-steadfast-console/, { method: 'POST' })
    const r = await request(base, `/api/dead-letters/${letter.id}/requeue`, { method: 'POST', headers: { 'x-steadfast-console': '1' } })
    assert.equal(r.status, 200, r.text)
    assert.equal(r.json.requeued, true)
    await assertStatus(base, `/api/dead-letters/${letter.id}`, 404, /there is no dead letter/)
    // Nobody runs the activity: the requeued message dies again, as a new letter.
    const again = await until(async () => (await fx.client.listDeadLetters()).find((d) => d.id > letter.id), 30_000, 'the requeued message to die again')
    assert.equal(again.instanceId, ids.poisoned)
  })

  test('the page: instances listed and filtered, HTML in an id shown as text', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const dialogs = []
    const errors = []
    page.on('dialog', (d) => dialogs.push(d.message()) && d.dismiss())
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('response', async (res) => bodies.push(`${res.url()}: ${await res.text().catch(() => '')}`))
    await page.goto(readOnly.url)
    await page.locator('table.instances').waitFor()
    assert.equal(await page.locator('#mode').textContent(), 'read-only')
    assert.equal(await page.locator('table.instances tbody tr').count(), 9)
    const htmlLink = page.locator('a.instance-link', { hasText: HTML_ID })
    assert.equal(await htmlLink.count(), 1, 'the HTML id is shown as its text')
    assert.equal(await page.locator('#view img').count(), 0, 'no element was made from the id')
    await screenshot(page, 'console-instances.png')

    await page.selectOption('select[name=status]', 'Failed')
    await page.click('form.filters button')
    await page.waitForFunction(() => location.hash.includes('status=Failed') && !document.querySelector('[aria-busy]'))
    const failedIds = await page.locator('a.instance-link').allTextContents()
    assert.deepEqual(failedIds.sort(), [ids.failed, ids.poisoned].sort())

    await page.goto(`${readOnly.url}#/instances?limit=4`)
    await page.waitForFunction(() => document.querySelectorAll('a.instance-link').length === 4)
    const firstPage = await page.locator('a.instance-link').allTextContents()
    await page.click('a.next-page')
    // The hash changes before the next page is fetched: wait for the next page itself.
    await page.waitForFunction((first) => location.hash.includes('cursor=') && !document.querySelector('[aria-busy]') &&
      [...document.querySelectorAll('a.instance-link')].some((a) => !first.includes(a.textContent)), firstPage)
    const nextPage = await page.locator('a.instance-link').allTextContents()
    assert.equal(nextPage.length, 4)
    assert.deepEqual(nextPage.filter((id) => firstPage.includes(id)), [], 'the next page repeats none of the first')

    await page.fill('input[name=name]', 'Child')
    await page.selectOption('select[name=status]', '')
    await page.click('form.filters button')
    // The hash changes before the list is fetched: wait for the filtered list itself.
    await page.waitForFunction(() => location.hash.includes('name=Child') && !document.querySelector('[aria-busy]') &&
      document.querySelectorAll('a.instance-link').length === 3)
    assert.equal(await page.locator('a.instance-link').count(), 3)
    assert.deepEqual(dialogs, [])
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the page: an instance with its timeline and tree, dead letters without write buttons, charts', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const errors = []
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('response', async (res) => bodies.push(`${res.url()}: ${await res.text().catch(() => '')}`))
    await page.goto(`${readOnly.url}#/instances?name=Parent`)
    await page.click(`a.instance-link:text-is("${ids.parent}")`)
    await page.locator('.timeline svg').waitFor()
    assert.equal(await page.locator('.instance-id').textContent(), ids.parent)
    // Two sub-orchestrations, each a bar from scheduled to completed.
    assert.equal(await page.locator('.timeline rect.bar-done').count(), 2)
    assert.equal(await page.locator('.tree li').count(), 4)
    assert.equal(await page.locator('.tree a').count(), 3)
    await screenshot(page, 'console-instance.png')

    await page.click(`.tree a:text-is("${ids.parent}-a-grandchild")`)
    await page.waitForFunction((id) => document.querySelector('.instance-id')?.textContent === id, `${ids.parent}-a-grandchild`)

    await page.goto(`${readOnly.url}#/instance/${encodeURIComponent(HTML_ID)}`)
    await page.locator('.timeline svg').waitFor()
    assert.equal(await page.locator('.instance-id').textContent(), HTML_ID)
    assert.equal(await page.locator('#view img, #view b').count(), 0)

    await page.goto(`${readOnly.url}#/dead-letters`)
    await page.locator('table.dead-letters').waitFor()
    assert.equal(await page.locator('table.dead-letters tbody tr').count(), 1)
    assert.equal(await page.locator('button.requeue, button.purge').count(), 0, 'a read-only console shows no write buttons')
    assert.doesNotMatch(await page.locator('#view').textContent(), /null|undefined/)
    await screenshot(page, 'console-dead-letters.png')

    // Instances that sleep on a timer move the charts' lines.
    await Promise.all(Array.from({ length: 6 }, (_, i) => fx.client.startOrchestration(uid(`nap${i}`), 'Naps', 1500)))
    await page.goto(`${readOnly.url}#/charts`)
    await page.locator('#chart-queues polyline').first().waitFor()
    await page.waitForFunction(() => document.querySelector('#chart-instances .legend li')?.textContent.includes('running: 7'), null, { timeout: 10_000 })
    await until(async () => (await fx.client.getSystemMetrics()).runningInstances === 1, 30_000, 'the naps to end')
    await page.waitForFunction(() => document.querySelector('#chart-instances .legend li')?.textContent === 'running: 1', null, { timeout: 10_000 })
    for (const chart of ['queues', 'instances', 'dead-letters']) {
      const points = await page.locator(`#chart-${chart} polyline`).first().getAttribute('points')
      assert.ok(points.split(' ').length >= 3, `${chart}: ${points}`)
    }
    await screenshot(page, 'console-charts.png')
    assert.deepEqual(errors, [])
    await page.close()
  })

  test('the page with --allow-writes requeues a dead letter', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const [letter] = await fx.client.listDeadLetters()
    await page.goto(`${writable.url}#/dead-letter/${letter.id}`)
    await page.locator('pre.work-item').waitFor()
    assert.match(await page.locator('pre.work-item').textContent(), /"ActivityExecute"/)
    await page.click('button.requeue')
    await page.locator('.flash').waitFor()
    assert.equal(await page.locator('.flash').textContent(), `Dead letter ${letter.id} requeued.`)
    assert.ok(!(await fx.client.listDeadLetters()).some((d) => d.id === letter.id))
    await page.close()
  })

  test('no response carries the password or the database URL', async () => {
    for (const path of ['/', '/app.js', '/api/config']) await request(readOnly.url, path)
    assert.ok(bodies.length > 50, `${bodies.length} responses`)
    const leaks = bodies.filter((b) => b.includes(SECRET) || b.includes(new URL(DATABASE_URL).host + new URL(DATABASE_URL).pathname))
    assert.deepEqual(leaks, [])
    assert.ok(!readOnly.out.stdout.includes(SECRET) && !readOnly.out.stderr.includes(SECRET))
  })

  test('SIGTERM and SIGINT stop it cleanly', async () => {
    assert.deepEqual(await readOnly.stop('SIGTERM'), { code: 0, signal: null })
    assert.match(readOnly.out.stdout, /stopped \(SIGTERM\)/)
    assert.equal(readOnly.out.stderr, '')
    assert.deepEqual(await writable.stop('SIGINT'), { code: 0, signal: null })
    assert.match(writable.out.stdout, /stopped \(SIGINT\)/)
  })
})
