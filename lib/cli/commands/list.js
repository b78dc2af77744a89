'use strict'

// `steadfast list`: instances with their orchestration, status, execution and times.

const { INSTANCE_STATUSES } = require('../../client-args')
const { parseInteger, parseChoice } = require('../args')
const { renderTable, time, count } = require('../table')

const LIMIT = Object.freeze({ min: 1, max: 1000, default: 50 })

const USAGE = `Usage: steadfast list --url URL [--status STATUS] [--name NAME] [--limit N] [--cursor C] [--json]

One page of instances, newest first, with their orchestration, version, status, current
execution and times. When there are more, the footer gives the --cursor of the next page.

Options:
  --status STATUS   only instances whose current execution is ${INSTANCE_STATUSES.join(', ')}
  --name NAME       only instances of this orchestration
  --limit N         page size (integer ${LIMIT.min}-${LIMIT.max}, default ${LIMIT.default})
  --cursor C        the next page after the one that printed this cursor`

/** The fields `list` shows of an InstanceInfo (not the output: see `describe`). */
function summary(info) {
  return {
    instanceId: info.instanceId,
    orchestrationName: info.orchestrationName,
    orchestrationVersion: info.orchestrationVersion,
    status: info.status,
    currentExecutionId: info.currentExecutionId,
    parentInstanceId: info.parentInstanceId ?? null,
    createdAt: info.createdAt,
    updatedAt: info.updatedAt,
  }
}

function render({ status, instances, nextCursor }) {
  const what = status ? `${status} instance` : 'instance'
  if (instances.length === 0) return `No ${what}s.\n`
  const rows = instances.map((i) => [
    i.instanceId,
    i.orchestrationName,
    i.orchestrationVersion,
    i.status,
    String(i.currentExecutionId),
    time(i.createdAt),
    time(i.updatedAt),
  ])
  const table = renderTable(['ID', 'NAME', 'VERSION', 'STATUS', 'EXECUTION', 'CREATED', 'UPDATED'], rows)
  const footer = nextCursor ? `${count(instances.length, what)} shown; next page: --cursor ${nextCursor}` : `${count(instances.length, what)}.`
  return `${table}\n${footer}\n`
}

module.exports = {
  name: 'list',
  usage: USAGE,
  options: { status: { type: 'string' }, name: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } },
  maxPositionals: 0,
  parse(values) {
    return {
      status: values.status === undefined ? undefined : parseChoice('--status', values.status, INSTANCE_STATUSES),
      name: values.name,
      limit: values.limit === undefined ? LIMIT.default : parseInteger('--limit', values.limit, LIMIT),
      cursor: values.cursor,
    }
  },
  async run(client, { status, name, limit, cursor }) {
    const page = await client.listInstances({
      limit,
      ...(status ? { status } : {}),
      ...(name !== undefined ? { orchestrationName: name } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    })
    const result = { status: status ?? null, limit, instances: page.instances.map(summary), nextCursor: page.nextCursor }
    return { json: result, text: render(result) }
  },
}
