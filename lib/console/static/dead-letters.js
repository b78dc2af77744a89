// Dead letters: the list (optionally one instance's), one letter with its work item, and
// requeue and purge when the console was started with --allow-writes.

import { getJson, postJson } from './api.js'
import { add, h, table, fields, time, clip, instanceHref } from './dom.js'

const PAGE = 50

function letterHref(id) {
  return `#/dead-letter/${id}`
}

function workItem(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

/** A button that runs `action` and passes what it says to `done`; a failure shows in `status`. */
function actionButton(text, cls, action, status, done) {
  const button = h('button', { type: 'button', class: cls })
  button.append(text)
  button.addEventListener('click', async () => {
    button.disabled = true
    try {
      done(await action())
    } catch (e) {
      status.replaceChildren(h('span', { class: 'error' }, e.message))
      button.disabled = false
    }
  })
  return button
}

function requeueButton(id, status, done) {
  return actionButton('Requeue', 'requeue', async () => {
    await postJson(`dead-letters/${id}/requeue`)
    return `Dead letter ${id} requeued.`
  }, status, done)
}

function purgeButton(instance, status, done) {
  const what = instance ? `the dead letters of ${instance}` : 'every dead letter'
  return actionButton(instance ? 'Purge this instance’s dead letters' : 'Purge all dead letters', 'purge danger', async () => {
    if (!confirm(`Delete ${what} for good?`)) throw new Error('Purge cancelled.')
    const { purged } = await postJson('dead-letters/purge', { instance })
    return `Purged ${purged} dead letter${purged === 1 ? '' : 's'}.`
  }, status, done)
}

function unsupported(root, config) {
  if (config.storeKind === 'postgres') return false
  add(root, h('h1', {}, 'Dead letters'), h('p', { class: 'empty' }, 'Dead letters are kept by the PostgreSQL provider only; this store is SQLite.'))
  return true
}

export async function deadLettersView(root, { params }, config, refresh) {
  if (unsupported(root, config)) return
  const instance = params.get('instance') ?? ''
  const after = params.get('after') ?? ''
  const doc = await getJson('dead-letters', { instance, after, limit: PAGE })
  const status = h('p', { class: 'action-status', role: 'status' })
  const rows = doc.deadLetters.map((d) => {
    const cells = [
      h('a', { href: letterHref(d.id) }, String(d.id)),
      d.queue,
      h('a', { href: instanceHref(d.instanceId) }, d.instanceId),
      d.executionId === null ? '–' : String(d.executionId),
      d.activityId === null ? '–' : String(d.activityId),
      String(d.attemptCount),
      d.reason,
      time(d.deadAt),
      d.error === null ? '–' : h('span', { title: clip(d.error, 2000) }, clip(d.error, 80)),
    ]
    if (config.writesAllowed) cells.push(requeueButton(d.id, status, refresh))
    return cells
  })
  const input = h('input', { name: 'instance', value: instance, placeholder: 'instance id', 'aria-label': 'instance id' })
  const form = h('form', {
    class: 'filters',
    onsubmit: (event) => {
      event.preventDefault()
      const q = input.value.trim()
      location.hash = q ? `#/dead-letters?instance=${encodeURIComponent(q)}` : '#/dead-letters'
    },
  }, input, h('button', { type: 'submit' }, 'Filter'))
  const headers = ['ID', 'Queue', 'Instance', 'Execution', 'Activity', 'Attempts', 'Reason', 'Dead at (UTC)', 'Error']
  if (config.writesAllowed) headers.push('')
  const next = doc.nextAfterId === null ? null : h('a', { class: 'next-page', href: `#/dead-letters?${new URLSearchParams({ ...(instance ? { instance } : {}), after: doc.nextAfterId })}` }, 'Next page »')
  add(root, 
    h('h1', {}, 'Dead letters'),
    form,
    rows.length === 0 ? h('p', { class: 'empty' }, 'No dead letters.') : table(headers, rows, { class: 'dead-letters' }),
    h('p', { class: 'pager' }, after ? h('a', { href: '#/dead-letters' }, '« First page') : null, next),
    config.writesAllowed && rows.length > 0 ? h('p', { class: 'actions' }, purgeButton(instance, status, refresh)) : null,
    status,
  )
}

export async function deadLetterView(root, { arg }, config, refresh) {
  if (unsupported(root, config)) return
  const d = await getJson(`dead-letters/${encodeURIComponent(arg)}`)
  const status = h('p', { class: 'action-status', role: 'status' })
  add(root, 
    h('h1', {}, `Dead letter ${d.id}`),
    fields([
      ['Queue', d.queue],
      ['Instance', h('a', { href: instanceHref(d.instanceId) }, d.instanceId)],
      ['Execution', d.executionId === null ? undefined : String(d.executionId)],
      ['Activity', d.activityId === null ? undefined : String(d.activityId)],
      ['Attempts', d.maxAttempts === null ? String(d.attemptCount) : `${d.attemptCount} (max ${d.maxAttempts})`],
      ['Reason', d.reason],
      ['Error', d.error === null ? undefined : h('pre', { class: 'error-text' }, d.error)],
      ['Session', d.sessionId],
      ['Tag', d.tag],
      ['Enqueued (UTC)', time(d.enqueuedAt)],
      ['Dead at (UTC)', time(d.deadAt)],
    ]),
    h('h2', {}, 'Work item'),
    h('pre', { class: 'work-item' }, workItem(d.workItem)),
    config.writesAllowed ? h('p', { class: 'actions' }, requeueButton(d.id, status, (message) => refresh(message, '#/dead-letters'))) : null,
    status,
  )
}
