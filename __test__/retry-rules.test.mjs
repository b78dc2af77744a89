// The rules steadfast adds to retry policies (src/retry.rs): an activity that throws a
// NonRetryableError, or an error with an own `nonRetryable: true`, is tried once and its
// error reaches the orchestration with its shape; `totalTimeoutMs` bounds all attempts and
// their backoff together. A plain error is still retried to `maxAttempts`. On SQLite and
// PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, uid, backends, runtimeOn, steadfast } from './helpers.mjs'

const { NonRetryableError } = steadfast

for (const backend of backends('retry')) {
  describe(`retry rules on ${backend.name}`, { timeout: 120_000 }, () => {
    const calls = new Map()
    const count = (ctx) => calls.set(ctx.instanceId, (calls.get(ctx.instanceId) ?? 0) + 1)
    const fx = runtimeOn(backend, FAST, (rt) => {
      rt.registerActivity('Refuses', async (ctx) => {
        count(ctx)
        const e = new NonRetryableError('account closed')
        e.code = 'E_CLOSED'
        e.account = 'acc-1'
        throw e
      })
      rt.registerActivity('MarkedByField', async (ctx) => {
        count(ctx)
        throw Object.assign(new TypeError('bad input'), { nonRetryable: true })
      })
      rt.registerActivity('Flaky', async (ctx) => {
        count(ctx)
        throw new Error('try again')
      })
      rt.registerActivity('Hangs', async (ctx) => {
        count(ctx)
        await new Promise((resolve) => setTimeout(resolve, 30_000).unref())
      })
      rt.registerOrchestration('Retried', function* (ctx, { activity, retry }) {
        try {
          return { value: yield ctx.scheduleActivityWithRetry(activity, null, retry) }
        } catch (e) {
          return { isNonRetryable: e instanceof NonRetryableError, name: e.name, message: e.message, code: e.code, account: e.account, nonRetryable: e.nonRetryable }
        }
      })
    })

    async function run(activity, retry) {
      const id = uid(activity)
      await fx.client.startOrchestration(id, 'Retried', { activity, retry })
      const status = await fx.client.waitForOrchestration(id, 60_000)
      assert.equal(status.status, 'Completed', JSON.stringify(status))
      return { result: status.output, calls: calls.get(id) }
    }

    test('a NonRetryableError is tried once and keeps its class, code and fields', async () => {
      const { result, calls } = await run('Refuses', { maxAttempts: 5, backoff: { kind: 'fixed', delayMs: 10 } })
      assert.equal(calls, 1)
      assert.deepEqual(result, { isNonRetryable: true, name: 'NonRetryableError', message: 'account closed', code: 'E_CLOSED', account: 'acc-1' })
    })

    test('an error with an own nonRetryable: true is tried once', async () => {
      const { result, calls } = await run('MarkedByField', { maxAttempts: 5, backoff: 'none' })
      assert.equal(calls, 1)
      assert.equal(result.name, 'TypeError')
      assert.equal(result.nonRetryable, true)
    })

    test('a plain error is still retried to maxAttempts', async () => {
      const { result, calls } = await run('Flaky', { maxAttempts: 3, backoff: 'none' })
      assert.equal(calls, 3)
      assert.equal(result.message, 'try again')
    })

    test('totalTimeoutMs ends the retries of a failing activity', async () => {
      const { result, calls } = await run('Flaky', { maxAttempts: 1000, backoff: { kind: 'fixed', delayMs: 100 }, totalTimeoutMs: 500 })
      assert.match(result.message, /^timeout: the retries ran out of their total time \(totalTimeoutMs = 500 ms\)$/)
      assert.ok(calls >= 1 && calls < 20, `${calls} attempts`)
    })

    test('totalTimeoutMs ends an attempt that hangs', async () => {
      const { result, calls } = await run('Hangs', { maxAttempts: 3, totalTimeoutMs: 300 })
      assert.match(result.message, /totalTimeoutMs = 300 ms/)
      assert.equal(calls, 1)
    })
  })
}
