// initTracing installs a process-wide subscriber, so each case runs in a child process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const LIB = fileURLToPath(new URL('../lib/index.js', import.meta.url))

/** Run `body` (an async function body with `steadfast` in scope) in a fresh node process. */
function child(body) {
  const script = `
    const steadfast = require(${JSON.stringify(LIB)})
    ;(async () => { ${body} })().then(
      () => process.exit(0),
      (e) => { console.error(e && e.stack || e); process.exit(1) })`
  const env = { ...process.env }
  delete env.RUST_LOG // the filter must come from logLevel
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { env, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
  })
}

test('initTracing sends orchestration and activity traces to the file', { timeout: 150_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sf-tracing-'))
  try {
    const logFile = join(dir, 'nested-ok.log')
    const r = await child(`
      const assert = require('node:assert/strict')
      steadfast.initTracing({ logFile: ${JSON.stringify(logFile)}, logLevel: 'info', logFormat: 'json' })
      assert.throws(() => steadfast.initTracing({ logFile: ${JSON.stringify(logFile)} }),
        (e) => e instanceof steadfast.SteadfastError && e.code === 'ERR_STEADFAST_INVALID_STATE' && /already initialized/.test(e.message))
      const provider = await steadfast.SqliteProvider.inMemory()
      const rt = new steadfast.Runtime(provider, { dispatcherPollIntervalMs: 10 })
      rt.registerActivity('Say', async (ctx, what) => { ctx.traceInfo('activity-marker ' + what); return what })
      rt.registerOrchestration('Talk', function* (ctx) {
        ctx.traceInfo('orchestration-marker')
        return yield ctx.scheduleActivity('Say', 'hello')
      })
      await rt.start()
      const client = new steadfast.Client(provider)
      await client.startOrchestration('t1', 'Talk')
      const s = await client.waitForOrchestration('t1', 60000)
      assert.equal(s.status, 'Completed', s.error)
      await rt.shutdown(2000)
    `)
    assert.equal(r.code, 0, r.stderr)
    const lines = (await readFile(logFile, 'utf8')).trim().split('\n')
    const records = lines.map((l) => JSON.parse(l))
    assert.ok(records.some((x) => /activity-marker hello/.test(JSON.stringify(x))), lines.join('\n'))
    assert.ok(records.some((x) => /orchestration-marker/.test(JSON.stringify(x))), lines.join('\n'))
    assert.ok(!/activity-marker/.test(r.stdout), 'traces went to the file, not stdout')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('initTracing after a runtime started is an InvalidState error', { timeout: 150_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sf-tracing-'))
  try {
    const r = await child(`
      const assert = require('node:assert/strict')
      const rt = new steadfast.Runtime(await steadfast.SqliteProvider.inMemory(), { logLevel: 'error' })
      await rt.start()
      assert.throws(() => steadfast.initTracing({ logFile: ${JSON.stringify(join(dir, 'late.log'))} }), { code: 'ERR_STEADFAST_INVALID_STATE' })
      await rt.shutdown(1000)
    `)
    assert.equal(r.code, 0, r.stderr)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('initTracing validates its options before installing anything', { timeout: 150_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sf-tracing-'))
  try {
    const good = join(dir, 'good.log')
    const r = await child(`
      const assert = require('node:assert/strict')
      const { initTracing, SteadfastError } = steadfast
      const cases = [
        [undefined, TypeError, /^options must be an object/],
        [null, TypeError, /^options must be an object/],
        ['file.log', TypeError, /^options must be an object/],
        [{}, TypeError, /^options\\.logFile is required$/],
        [{ logFile: '' }, TypeError, /^options\\.logFile must be a non-empty string/],
        [{ logFile: 'a\\0b' }, TypeError, /^options\\.logFile must not contain NUL/],
        [{ logFile: 'x'.repeat(5000) }, RangeError, /^options\\.logFile must be at most 4096/],
        [{ logFile: 5 }, TypeError, /^options\\.logFile must be a non-empty string/],
        [{ logFile: ${JSON.stringify(good)}, logLevel: 'verbose' }, TypeError, /^options\\.logLevel must be one of/],
        [{ logFile: ${JSON.stringify(good)}, logFormat: 'yaml' }, TypeError, /^options\\.logFormat must be one of/],
        [{ logFile: ${JSON.stringify(good)}, logfile: 'x' }, TypeError, /^options\\.logfile is not a known option/],
      ]
      for (const [options, cls, re] of cases) {
        assert.throws(() => initTracing(options), (e) => e instanceof cls && re.test(e.message))
      }
      // A file that cannot be opened: a clear error, and tracing stays uninstalled.
      assert.throws(() => initTracing({ logFile: ${JSON.stringify(join(dir, 'missing-dir', 'x.log'))} }),
        (e) => e instanceof SteadfastError && e.code === 'ERR_STEADFAST_INVALID_ARGUMENT' && /options\\.logFile/.test(e.message))
      initTracing({ logFile: ${JSON.stringify(good)} })
    `)
    assert.equal(r.code, 0, r.stderr)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
