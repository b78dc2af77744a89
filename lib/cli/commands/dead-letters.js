'use strict'

// `steadfast dead-letters [list|show ID|requeue ID|purge]`: steadfast-pg's dead letters,
// through Client.listDeadLetters / getDeadLetter / requeueDeadLetter / purgeDeadLetters.

const { MAX_DEAD_LETTER_PAGE } = require('../../options')
const { parseInteger, redactArg, requiredPositional } = require('../args')
const { UsageError, CliError, EXIT, notFound } = require('../errors')
const { renderTable, renderFields, printable, time, clip, cell, count } = require('../table')

const LIST_LIMIT = Object.freeze({ min: 1, max: MAX_DEAD_LETTER_PAGE, default: 100 })
const ID = Object.freeze({ min: 1, max: Number.MAX_SAFE_INTEGER })
/** Dead letters a purge without --yes shows of those it would delete. */
const PREVIEW = 20

const USAGE = `Usage: steadfast dead-letters [list] --url URL [--instance ID] [--after N] [--limit N] [--json]
       steadfast dead-letters show N --url URL [--json]
       steadfast dead-letters requeue N --url URL [--json]
       steadfast dead-letters purge --url URL [--instance ID] [--dead-before TIME] [--yes] [--json]

Messages steadfast-pg took out of its queues instead of delivering them again (poison,
attempt ceiling, undecodable). PostgreSQL only.

  list      dead letters in id order, a page at a time (the default action)
  show N    dead letter N in full, with its original work item
  requeue N put dead letter N back on its queue with a fresh attempt budget (writes)
  purge     delete dead letters for good (writes); without --yes it only shows what it
            would delete, and exits 1

Options:
  --instance ID       only this instance's dead letters (list, purge)
  --after N           list: only ids greater than N, the last id of the previous page (default 0)
  --limit N           list: page size, integer ${LIST_LIMIT.min}-${LIST_LIMIT.max} (default ${LIST_LIMIT.default})
  --dead-before TIME  purge: only those dead before TIME, an ISO 8601 time such as 2025-01-31T00:00:00Z
  --yes               purge: really delete`

const OPTIONS = {
  instance: { type: 'string' },
  after: { type: 'string' },
  limit: { type: 'string' },
  'dead-before': { type: 'string' },
  yes: { type: 'boolean' },
}

/** The options each action takes, and whether it names a dead letter. */
const ACTIONS = {
  list: { options: ['instance', 'after', 'limit'], takesId: false },
  show: { options: [], takesId: true },
  requeue: { options: [], takesId: true },
  purge: { options: ['instance', 'dead-before', 'yes'], takesId: false },
}

function parseTime(flag, raw) {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN
  if (!Number.isFinite(ms) || ms < 0) {
    throw new UsageError(`${flag} must be an ISO 8601 time after 1970, such as 2025-01-31T00:00:00Z (got ${JSON.stringify(redactArg(raw))})`)
  }
  return ms
}

function letterRows(letters) {
  const rows = letters.map((d) => [
    String(d.id),
    d.queue,
    d.instanceId,
    d.executionId === null ? '-' : String(d.executionId),
    d.activityId === null ? '-' : String(d.activityId),
    String(d.attemptCount),
    d.reason,
    time(d.deadAt),
    d.error === null ? '-' : clip(cell(d.error), 60),
  ])
  return renderTable(['ID', 'QUEUE', 'INSTANCE', 'EXECUTION', 'ACTIVITY', 'ATTEMPTS', 'REASON', 'DEAD AT', 'ERROR'], rows)
}

/** The work item as indented JSON when it parses (it is kept as text, never parsed by the library). */
function workItemText(text) {
  let shown = text
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    // Undecodable items are exactly the ones that may not be JSON: show them as stored.
  }
  return shown.split('\n').map((line) => `  ${printable(line)}`).join('\n') + '\n'
}

function renderLetter(d) {
  return (
    renderFields([
      ['Dead letter', String(d.id)],
      ['Queue', d.queue],
      ['Instance', d.instanceId],
      ['Execution', d.executionId],
      ['Activity', d.activityId],
      ['Attempts', d.maxAttempts === null ? String(d.attemptCount) : `${d.attemptCount} (max ${d.maxAttempts})`],
      ['Reason', d.reason],
      ['Error', d.error],
      ['Session', d.sessionId],
      ['Tag', d.tag],
      ['Enqueued', time(d.enqueuedAt)],
      ['Dead at', time(d.deadAt)],
    ]) + `Work item:\n${workItemText(d.workItem)}`
  )
}

async function getLetter(client, id) {
  const letter = await client.getDeadLetter(id)
  if (letter === null) throw notFound(`there is no dead letter ${id}`)
  return letter
}

const RUN = {
  async list(client, { instanceId, afterId, limit }) {
    const deadLetters = await client.listDeadLetters({ instanceId, afterId, limit })
    const nextAfterId = deadLetters.length === limit ? deadLetters[deadLetters.length - 1].id : null
    let text = deadLetters.length === 0 ? 'No dead letters.\n' : `${letterRows(deadLetters)}\n${count(deadLetters.length, 'dead letter')}.\n`
    if (nextAfterId !== null) text += `More may follow: add --after ${nextAfterId}.\n`
    return { json: { deadLetters, nextAfterId }, text }
  },

  async show(client, { id }) {
    const letter = await getLetter(client, id)
    return { json: letter, text: renderLetter(letter) }
  },

  async requeue(client, { id }) {
    const letter = await getLetter(client, id)
    if (!(await client.requeueDeadLetter(id))) throw notFound(`there is no dead letter ${id} any more (requeued or purged meanwhile)`)
    const text = `Requeued dead letter ${id}: a new ${letter.queue} message for instance ${cell(JSON.stringify(letter.instanceId))} with a fresh attempt budget.\n`
    return { json: { requeued: true, deadLetter: letter }, text }
  },

  async purge(client, { instanceId, deadBeforeMs, yes }) {
    if (yes) {
      const purged = await client.purgeDeadLetters({ instanceId, deadBeforeMs })
      return { json: { purged }, text: `Purged ${count(purged, 'dead letter')}.\n` }
    }
    const matching = await matchingLetters(client, instanceId, deadBeforeMs)
    const preview = matching.slice(0, PREVIEW)
    let text = matching.length === 0 ? 'No dead letters match: there is nothing to purge.\n' : letterRows(preview)
    if (matching.length > preview.length) text += `… and ${matching.length - preview.length} more.\n`
    if (matching.length > 0) text += `\nWould purge ${count(matching.length, 'dead letter')}; nothing was deleted. Run again with --yes to delete them.\n`
    return { json: { purged: 0, wouldPurge: matching.length, deadLetters: preview }, text, exitCode: EXIT.UNDONE }
  },
}

/** Every dead letter a purge with these filters would delete, a page at a time. */
async function matchingLetters(client, instanceId, deadBeforeMs) {
  const out = []
  let afterId = 0
  for (;;) {
    const page = await client.listDeadLetters({ instanceId, afterId, limit: MAX_DEAD_LETTER_PAGE })
    out.push(...page.filter((d) => deadBeforeMs === undefined || d.deadAt < deadBeforeMs))
    if (page.length < MAX_DEAD_LETTER_PAGE) return out
    afterId = page[page.length - 1].id
  }
}

module.exports = {
  name: 'dead-letters',
  usage: USAGE,
  options: OPTIONS,
  maxPositionals: 2,
  parse(values, positionals) {
    const action = positionals[0] ?? 'list'
    const spec = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined
    if (!spec) throw new UsageError(`unknown action ${JSON.stringify(redactArg(action))}: list, show N, requeue N or purge`)
    for (const flag of Object.keys(OPTIONS)) {
      if (values[flag] !== undefined && !spec.options.includes(flag)) throw new UsageError(`--${flag} does not apply to dead-letters ${action}`)
    }
    if (values.instance === '') throw new UsageError('--instance needs a non-empty instance id')
    if (!spec.takesId && positionals.length > 1) {
      throw new UsageError(`unexpected argument ${JSON.stringify(redactArg(positionals[1]))} (dead-letters ${action} takes no id)`)
    }
    return {
      action,
      id: spec.takesId ? parseInteger('N', requiredPositional(positionals, 1, 'N (the dead letter id)'), ID) : undefined,
      instanceId: values.instance,
      afterId: values.after === undefined ? 0 : parseInteger('--after', values.after, { min: 0, max: Number.MAX_SAFE_INTEGER }),
      limit: values.limit === undefined ? LIST_LIMIT.default : parseInteger('--limit', values.limit, LIST_LIMIT),
      deadBeforeMs: values['dead-before'] === undefined ? undefined : parseTime('--dead-before', values['dead-before']),
      yes: values.yes === true,
    }
  },
  async run(client, opts, store) {
    if (store.kind !== 'postgres') {
      throw new CliError('unsupported', 'dead letters are kept by the PostgreSQL provider only; this store is SQLite')
    }
    return RUN[opts.action](client, opts)
  },
}
