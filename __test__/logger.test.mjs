// The `logger` runtime option: the process's log records (duroxide's and steadfast-pg's)
// reach the application's logger with their fields, a later runtime's logger takes over, and
// a bad logger or filter is refused. Without a logger, stdout gets no ANSI colours when it is
// not a terminal (in a child process: the log output is process-wide).
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { POISON_FAST, backends, steadfast, thrown, uid, until } from './helpers.mjs'

const [, postgres] = backends('logger')
// helpers.mjs quiets the logs with RUST_LOG, which would win over logFilter: this file's
// filters must come from the options.
delete process.env.RUST_LOG

/** A pino-shaped logger that keeps every record. */
function recordingLogger() {
  const records = []
  const at = (level) => (fields, message) => records.push({ level, fields, message })
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

function register(rt) {
  rt.registerOrchestration('Traces', function* (ctx, word) {
    ctx.traceInfo(`traced ${word}`)
    return word
  })
  rt.registerOrchestration('CallsNobody', function* (ctx) {
    return yield ctx.scheduleActivity('NotRegistered', 1)
  })
}

describe('the logger option', { timeout: 60_000 }, () => {
  test('receives orchestration traces and provider diagnostics with their fields', async () => {
    const env = await postgres.open()
    const logger = recordingLogger()
    const rt = new steadfast.Runtime(env.provider, { ...POISON_FAST, logFilter: 'warn,steadfast_pg=info,duroxide::orchestration=info', logger })
    register(rt)
    try {
      await rt.start()
      const client = new steadfast.Client(env.provider)
      const traced = uid('traced')
      await client.startOrchestration(traced, 'Traces', 'first')
      await client.waitForOrchestration(traced, 20_000)
      const poisoned = uid('poison')
      await client.startOrchestration(poisoned, 'CallsNobody', null)
      await until(() => logger.records.some((r) => r.fields.event === 'steadfast.poison_committed'), 20_000, 'a poison record').catch(async (e) => {
        // Say what did happen (once, records were lost to a per-layer filter: log_output.rs).
        const events = [...new Set(logger.records.map((r) => r.fields.event).filter(Boolean))]
        const status = await client.getStatus(poisoned).catch((err) => err.message)
        e.message += `; events logged: ${JSON.stringify(events)}; ${poisoned}: ${JSON.stringify(status)}; last records: ${JSON.stringify(logger.records.slice(-5))}`
        throw e
      })

      const trace = logger.records.find((r) => r.message.includes('traced first'))
      assert.ok(trace, `no trace record in ${JSON.stringify(logger.records.slice(0, 5))}`)
      assert.equal(trace.level, 'info')
      assert.equal(trace.fields.target, 'duroxide::orchestration')
      assert.equal(trace.fields.instance_id, traced)

      const poison = logger.records.find((r) => r.fields.event === 'steadfast.poison_committed')
      assert.equal(poison.level, 'info')
      assert.equal(poison.fields.target, 'steadfast_pg')
      assert.equal(poison.fields.queue, 'worker')
      assert.equal(poison.fields.instance, poisoned)
      assert.equal(typeof poison.fields.attempt_count, 'number')
      assert.equal(poison.message, 'steadfast.poison_committed')
    } finally {
      await rt.shutdown(2000)
      await env.cleanup()
    }
  })

  test("a later runtime's logger takes over; shutdown stops the records to it", async () => {
    const env = await postgres.open()
    const first = recordingLogger()
    const second = recordingLogger()
    const a = new steadfast.Runtime(env.provider, { ...POISON_FAST, logger: first })
    const b = new steadfast.Runtime(env.provider, { ...POISON_FAST, logger: second })
    register(a)
    register(b)
    try {
      await a.start()
      await b.start()
      const client = new steadfast.Client(env.provider)
      const id = uid('takeover')
      await client.startOrchestration(id, 'Traces', 'second')
      await client.waitForOrchestration(id, 20_000)
      await until(() => second.records.some((r) => r.message.includes('traced second')), 10_000, 'the trace at the second logger')
      assert.ok(!first.records.some((r) => r.message.includes('traced second')))
      await b.shutdown(2000)
      const seen = second.records.length
      const after = uid('after')
      await client.startOrchestration(after, 'Traces', 'third')
      await client.waitForOrchestration(after, 20_000)
      assert.equal(second.records.length, seen, 'records after its runtime shut down')
    } finally {
      await a.shutdown(2000)
      await b.shutdown(2000)
      await env.cleanup()
    }
  })

  test('a logger without the four methods and a malformed filter are refused, naming the option', async () => {
    const env = await postgres.open()
    try {
      const e = thrown(() => new steadfast.Runtime(env.provider, { logger: { info() {} } }))
      assert.equal(e.name, 'TypeError')
      assert.match(e.message, /options\.logger must have debug, info, warn, error methods \(missing debug, warn, error\)/)
      assert.equal(thrown(() => new steadfast.Runtime(env.provider, { logger: 'console' })).name, 'TypeError')
      const f = thrown(() => new steadfast.Runtime(env.provider, { logFilter: 'steadfast_pg=loud' }))
      assert.equal(f.code, 'ERR_STEADFAST_INVALID_OPTIONS')
      assert.match(f.message, /logFilter/)
    } finally {
      await env.cleanup()
    }
  })
})

describe('stdout without a logger', { timeout: 60_000 }, () => {
  const fixture = fileURLToPath(new URL('./fixtures/stdout-log.mjs', import.meta.url))
  for (const format of ['pretty', 'compact']) {
    test(`${format}: plain text when stdout is a pipe, and a logger cannot take over afterwards`, async () => {
      const env = { ...process.env }
      delete env.RUST_LOG
      const { stdout } = await promisify(execFile)(process.execPath, [fixture, format], { timeout: 30_000, env })
      assert.match(stdout, /plain-text-check/)
      assert.ok(!stdout.includes('\x1b['), `ANSI escapes in: ${JSON.stringify(stdout.slice(0, 300))}`)
      assert.match(stdout, /logger start: ERR_STEADFAST_INVALID_STATE/)
    })
  }
})
