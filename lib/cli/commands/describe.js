'use strict'

// `steadfast describe ID`: one instance, its status (output or error, custom status) and its
// latest executions.

const { INSTANCE_ID_ONLY } = require('../args')
const { instanceInfo } = require('../instances')
const { renderFields, renderTable, time, jsonCell, count } = require('../table')

/** Executions read in full; an instance that continued-as-new thousands of times shows the latest. */
const MAX_EXECUTIONS = 20

const USAGE = `Usage: steadfast describe ID --url URL [--json]

One instance: orchestration, status, output or error, custom status, parent, times, and its
executions (the latest ${MAX_EXECUTIONS} when there are more; see steadfast history ID --execution N).`

/** A failure's first line (a stack trace follows it); --json has the whole text. */
function firstLine(text) {
  const lines = text.split('\n')
  return lines.length === 1 ? text : `${lines[0]} (and ${lines.length - 1} more lines: --json has them)`
}

function render({ instance: i, status: s, executionCount, executions }) {
  const fields = [
    ['Instance', i.instanceId],
    ['Orchestration', `${i.orchestrationName} ${i.orchestrationVersion}`],
    ['Status', s.errorCategory ? `${i.status} (${s.errorCategory})` : i.status],
  ]
  if (s.status === 'Completed') fields.push(['Output', jsonCell(s.output, 200)])
  if (s.error !== undefined) fields.push(['Error', firstLine(s.error)])
  if (s.customStatus !== undefined) fields.push(['Custom status', `${s.customStatus} (version ${s.customStatusVersion})`])
  fields.push(
    ['Parent', i.parentInstanceId],
    ['Current execution', String(i.currentExecutionId)],
    ['Created', time(i.createdAt)],
    ['Updated', time(i.updatedAt)],
  )
  const rows = executions.map((e) => [
    String(e.executionId),
    e.status,
    time(e.startedAt),
    time(e.completedAt),
    String(e.eventCount),
  ])
  const shown = executionCount > executions.length ? `, the latest ${executions.length} shown` : ''
  return (
    renderFields(fields) +
    `\n${count(executionCount, 'execution')}${shown}:\n` +
    renderTable(['EXECUTION', 'STATUS', 'STARTED', 'COMPLETED', 'EVENTS'], rows)
  )
}

module.exports = {
  name: 'describe',
  usage: USAGE,
  ...INSTANCE_ID_ONLY,
  async run(client, { id }) {
    const instance = await instanceInfo(client, id)
    const status = await client.getStatus(id)
    const ids = await client.listExecutions(id)
    const executions = []
    for (const n of ids.slice(-MAX_EXECUTIONS)) executions.push(await client.getExecutionInfo(id, n))
    const result = { instance, status, executionCount: ids.length, executions }
    return { json: result, text: render(result) }
  },
}
