'use strict'

// `steadfast cancel ID [--reason TEXT] [--wait SECONDS]`: request the cancellation of a
// running instance (and so of its sub-orchestrations); a runtime carries it out.

const { parseInteger, requiredPositional } = require('../args')
const { CliError, EXIT } = require('../errors')
const { instanceStatus } = require('../instances')

const DEFAULT_REASON = 'cancelled with steadfast cancel'
const WAIT = Object.freeze({ min: 0, max: 3600 })

const USAGE = `Usage: steadfast cancel ID --url URL [--reason TEXT] [--wait SECONDS] [--json]

Request the cancellation of running instance ID: a runtime serving it fails it with
"canceled: TEXT", and its sub-orchestrations with it. This writes to the store.

Options:
  --reason TEXT     the reason recorded (default: "${DEFAULT_REASON}")
  --wait SECONDS    wait up to SECONDS (integer ${WAIT.min}-${WAIT.max}) for the instance to end and
                    report how it ended; exit 1 if it is still running then (default 0: don't wait)`

function render({ instanceId, reason, status }) {
  const id = JSON.stringify(instanceId)
  const requested = `Cancellation of ${id} requested (reason: ${JSON.stringify(reason)}).\n`
  if (status === null) return `${requested}A runtime serving the instance carries it out.\n`
  if (status.status === 'Running') return `${requested}It is still running: is a runtime serving it?\n`
  return `${requested}It ended ${status.status}${status.error ? `: ${status.error}` : ''}.\n`
}

module.exports = {
  name: 'cancel',
  usage: USAGE,
  options: { reason: { type: 'string' }, wait: { type: 'string' } },
  maxPositionals: 1,
  parse(values, positionals) {
    return {
      id: requiredPositional(positionals, 0, 'ID'),
      reason: values.reason ?? DEFAULT_REASON,
      waitSeconds: values.wait === undefined ? 0 : parseInteger('--wait', values.wait, WAIT),
    }
  },
  async run(client, { id, reason, waitSeconds }) {
    const before = await instanceStatus(client, id)
    if (before.status !== 'Running') {
      throw new CliError('not_running', `instance ${JSON.stringify(id)} is ${before.status}: there is nothing to cancel`, EXIT.UNDONE)
    }
    await client.cancelInstance(id, reason)
    let status = null
    if (waitSeconds > 0) {
      try {
        status = await client.waitForOrchestration(id, waitSeconds * 1000)
      } catch (e) {
        if (e?.code !== 'ERR_STEADFAST_TIMEOUT') throw e
        status = { status: 'Running' }
      }
    }
    const result = { instanceId: id, reason, status }
    const stillRunning = status !== null && status.status === 'Running'
    return { json: result, text: render(result), exitCode: stillRunning ? EXIT.UNDONE : EXIT.OK }
  },
}
