// An activity's thrown error reaches the orchestration with its shape: class (for the
// built-in error classes) or name, message, code, stack and own enumerable fields, rebuilt
// from history the same way on every replay; `all` results keep carrying the message alone,
// and values thrown that are not Errors stay plain text. On SQLite and PostgreSQL.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FAST, uid, backends, runtimeOn } from './helpers.mjs'

class PaymentDeclined extends Error {
  constructor(message, fields) {
    super(message)
    this.name = 'PaymentDeclined'
    this.code = 'E_DECLINED'
    Object.assign(this, fields)
  }
}

/** What an orchestration sees of a caught error, as JSON. */
function seen(e) {
  return {
    isError: e instanceof Error,
    isRangeError: e instanceof RangeError,
    name: e.name,
    message: e.message,
    code: e.code,
    retryAfterMs: e.retryAfterMs,
    card: e.card,
    stackFromActivity: /at .*activity-errors\.test\.mjs/.test(e.stack) && e.stack.includes('Charge'),
  }
}

for (const backend of backends('errors')) {
  describe(`activity errors on ${backend.name}`, { timeout: 120_000 }, () => {
    const fx = runtimeOn(backend, FAST, (rt) => {
      rt.registerActivity('Charge', async function Charge() {
        throw new PaymentDeclined('card declined', { retryAfterMs: 3000, card: { last4: '4242' } })
      })
      rt.registerActivity('Range', async () => {
        throw new RangeError('amount out of range')
      })
      rt.registerActivity('Text', async () => {
        throw 'plain text thrown' // eslint-disable-line no-throw-literal
      })
      rt.registerOrchestration('Catches', function* (ctx) {
        const out = {}
        for (const name of ['Charge', 'Range', 'Text']) {
          try {
            yield ctx.scheduleActivity(name, null)
          } catch (e) {
            out[name] = seen(e)
          }
        }
        yield ctx.scheduleTimer(1) // one more turn: everything above is replayed from history
        out.all = yield ctx.all([ctx.scheduleActivity('Charge', null), ctx.scheduleActivity('Text', null)])
        return out
      })
    })

    test('the orchestration catches the error as the activity threw it', async () => {
      const id = uid('errors')
      await fx.client.startOrchestration(id, 'Catches', null)
      const st = await fx.client.waitForOrchestration(id, 30_000)
      assert.equal(st.status, 'Completed', st.error)
      assert.deepEqual(st.output.Charge, {
        isError: true,
        isRangeError: false,
        name: 'PaymentDeclined',
        message: 'card declined',
        code: 'E_DECLINED',
        retryAfterMs: 3000,
        card: { last4: '4242' },
        stackFromActivity: true,
      })
      assert.equal(st.output.Range.isRangeError, true)
      assert.equal(st.output.Range.name, 'RangeError')
      assert.equal(st.output.Range.message, 'amount out of range')
      assert.equal(st.output.Text.name, 'Error')
      assert.equal(st.output.Text.message, 'plain text thrown')
      assert.equal(st.output.Text.code, undefined)
      assert.deepEqual(st.output.all, [{ err: 'card declined' }, { err: 'plain text thrown' }])
    })
  })
}

test('a failure text whose fields name __proto__ still rebuilds a RangeError', async () => {
  const { errorOf } = await import('../lib/failure.js')
  const text = 'boom\n[steadfast:error] {"name":"RangeError","code":"X","fields":{"__proto__":{"evil":1},"n":1}}'
  const err = errorOf(text)
  assert.ok(err instanceof RangeError)
  assert.equal(Object.getPrototypeOf(err), RangeError.prototype)
  assert.deepEqual({ message: err.message, code: err.code, n: err.n, evil: err.evil }, { message: 'boom', code: 'X', n: 1, evil: undefined })
})
