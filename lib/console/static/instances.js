// The instance list: status and orchestration filters, pages through nextCursor.

import { getJson } from './api.js'
import { add, h, badge, table, time, instanceHref } from './dom.js'

const STATUSES = ['Running', 'Completed', 'Failed', 'ContinuedAsNew']
const LIMITS = ['10', '25', '50', '100']

function listHref(params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v))
  return `#/instances${q.size ? `?${q}` : ''}`
}

function filterForm({ status, name, limit }) {
  const statusSelect = h('select', { name: 'status', 'aria-label': 'status' }, h('option', { value: '' }, 'any status'), STATUSES.map((s) => h('option', { value: s, selected: s === status }, s)))
  const nameInput = h('input', { name: 'name', value: name, placeholder: 'orchestration name', 'aria-label': 'orchestration name' })
  const limitSelect = h('select', { name: 'limit', 'aria-label': 'page size' }, LIMITS.map((l) => h('option', { value: l, selected: l === limit }, `${l} per page`)))
  const submit = (event) => {
    event.preventDefault()
    location.hash = listHref({ status: statusSelect.value, name: nameInput.value.trim(), limit: limitSelect.value })
  }
  return h('form', { class: 'filters', onsubmit: submit }, statusSelect, nameInput, limitSelect, h('button', { type: 'submit' }, 'Filter'))
}

export async function instancesView(root, { params }) {
  const filter = { status: params.get('status') ?? '', name: params.get('name') ?? '', limit: params.get('limit') ?? '25' }
  const cursor = params.get('cursor') ?? ''
  const page = await getJson('instances', { ...filter, cursor })
  const rows = page.instances.map((i) => [
    h('a', { href: instanceHref(i.instanceId), class: 'instance-link' }, i.instanceId),
    i.orchestrationName,
    i.orchestrationVersion,
    badge(i.status),
    String(i.currentExecutionId),
    i.parentInstanceId ? h('a', { href: instanceHref(i.parentInstanceId) }, i.parentInstanceId) : '–',
    time(i.createdAt),
    time(i.updatedAt),
  ])
  const pager = h(
    'p',
    { class: 'pager' },
    cursor ? h('a', { href: listHref(filter), class: 'first-page' }, '« First page') : null,
    page.nextCursor ? h('a', { href: listHref({ ...filter, cursor: page.nextCursor }), class: 'next-page' }, 'Next page »') : null,
  )
  add(root, 
    h('h1', {}, 'Instances'),
    filterForm(filter),
    rows.length === 0
      ? h('p', { class: 'empty' }, 'No instances match.')
      : table(['Instance', 'Orchestration', 'Version', 'Status', 'Execution', 'Parent', 'Created (UTC)', 'Updated (UTC)'], rows, { class: 'instances' }),
    h('p', { class: 'count' }, `${rows.length} shown${page.nextCursor ? ', more on the next page' : ''}`),
    pager,
  )
}
