'use strict'

// `steadfast list`: instances with their orchestration, status, execution and times.

const { INSTANCE_STATUSES } = require('../../client-args')
const { parseInteger, parseChoice } = require('../args')
const { instanceInfoIfPresent } = require('../instances')
const { renderTable, time, count } = require('../table')

const LIMIT = Object.freeze({ min: 1, max: 10_000, default: 50 })

const USAGE = `Usage: steadfast list --url URL [--status STATUS] [--limit N] [--json]

Instances with their orchestration, version, status, current execution and times, in the
store's order (PostgreSQL: newest first). Listing is not paged yet: the ids of all matching
instances are read, and the details of the first --limit of them.

Options:
  --status STATUS   only instances whose current execution is ${INSTANCE_STATUSES.join(', ')}
  --limit N         show at most N instances (integer ${LIMIT.min}-${LIMIT.max}, default ${LIMIT.default})`

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

function render({ total, status, limit, instances }) {
  const what = status ? `${status} instance` : 'instance'
  if (total === 0) return `No ${what}s.\n`
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
  const footer =
    total > limit
      ? `${instances.length} of ${count(total, what)} shown (--limit ${limit}; listing is not paged yet).`
      : `${count(total, what)}.`
  return `${table}\n${footer}\n`
}

module.exports = {
  name: 'list',
  usage: USAGE,
  options: { status: { type: 'string' }, limit: { type: 'string' } },
  maxPositionals: 0,
  parse(values) {
    return {
      status: values.status === undefined ? undefined : parseChoice('--status', values.status, INSTANCE_STATUSES),
      limit: values.limit === undefined ? LIMIT.default : parseInteger('--limit', values.limit, LIMIT),
    }
  },
  async run(client, { status, limit }) {
    const ids = status ? await client.listInstancesByStatus(status) : await client.listAllInstances()
    const infos = []
    for (const id of ids.slice(0, limit)) {
      const info = await instanceInfoIfPresent(client, id)
      if (info) infos.push(summary(info))
    }
    const result = { total: ids.length, status: status ?? null, limit, instances: infos }
    return { json: result, text: render(result) }
  },
}
