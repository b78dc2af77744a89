'use strict'

// `steadfast history ID [--execution N]`: the history events of one execution.

const { parseInteger, requiredPositional } = require('../args')
const { notFound } = require('../errors')
const { instanceInfo } = require('../instances')
const { renderTable, time, clip, cell, count } = require('../table')

const DATA_WIDTH = 100

const USAGE = `Usage: steadfast history ID --url URL [--execution N] [--json]

The history events of one execution of instance ID, in order: id, kind, the event it
completes, time and payload (clipped to ${DATA_WIDTH} characters; --json has it whole).

Options:
  --execution N     the execution (integer, 1 for the first); default: the current one`

function render({ instanceId, executionId, events }) {
  const rows = events.map((e) => [
    String(e.eventId),
    e.kind,
    e.sourceEventId === undefined ? '-' : String(e.sourceEventId),
    time(e.timestampMs),
    e.data === undefined ? '-' : clip(cell(e.data), DATA_WIDTH),
  ])
  return (
    `Instance ${cell(instanceId)}, execution ${executionId}: ${count(events.length, 'event')}\n\n` +
    renderTable(['EVENT', 'KIND', 'SOURCE', 'TIME', 'DATA'], rows)
  )
}

module.exports = {
  name: 'history',
  usage: USAGE,
  options: { execution: { type: 'string' } },
  maxPositionals: 1,
  parse(values, positionals) {
    return {
      id: requiredPositional(positionals, 0, 'ID'),
      execution:
        values.execution === undefined
          ? undefined
          : parseInteger('--execution', values.execution, { min: 1, max: Number.MAX_SAFE_INTEGER }),
    }
  },
  async run(client, { id, execution }) {
    const info = await instanceInfo(client, id)
    const executionId = execution ?? info.currentExecutionId
    const ids = await client.listExecutions(id)
    if (!ids.includes(executionId)) {
      const has = ids.length <= 10 ? ids.join(', ') : `${ids[0]} … ${ids[ids.length - 1]}`
      throw notFound(`instance ${JSON.stringify(id)} has no execution ${executionId} (it has ${has})`)
    }
    const events = await client.readExecutionHistory(id, executionId)
    const result = { instanceId: id, executionId, events }
    return { json: result, text: render(result) }
  },
}
