// One instance: its fields, executions, the chosen execution's history (timeline and events)
// and its sub-orchestration tree.

import { getJson } from './api.js'
import { add, h, badge, table, fields, time, clip, json, instanceHref } from './dom.js'
import { timeline } from './timeline.js'

const DATA_WIDTH = 160

function treeNode(node, currentId) {
  const link = node.instanceId === currentId
    ? h('strong', { class: 'tree-current' }, node.instanceId)
    : h('a', { href: instanceHref(node.instanceId) }, node.instanceId)
  return h(
    'li',
    {},
    h('span', { class: 'tree-node' }, link, ' ', h('span', { class: 'muted' }, `${node.orchestrationName} ${node.orchestrationVersion}`), ' ', badge(node.status)),
    node.children.length ? h('ul', {}, node.children.map((c) => treeNode(c, currentId))) : null,
  )
}

function treeSection(doc, currentId) {
  const omitted = doc.omitted > 0 ? h('p', { class: 'note' }, `${doc.omitted} more not shown.`) : null
  return h('section', { class: 'tree' }, h('h2', {}, `Sub-orchestration tree (${doc.size})`), h('ul', { class: 'tree-root' }, treeNode(doc.tree, currentId)), omitted)
}

function eventsTable(events) {
  const t0 = events[0]?.timestampMs ?? 0
  const rows = events.map((e) => [
    String(e.eventId),
    e.kind,
    e.sourceEventId === undefined ? '–' : String(e.sourceEventId),
    `+${e.timestampMs - t0} ms`,
    e.data === undefined ? '–' : h('code', { title: clip(e.data, 2000) }, clip(e.data, DATA_WIDTH)),
  ])
  return table(['#', 'Kind', 'Source', 'Time', 'Data'], rows, { class: 'events' })
}

export async function instanceView(root, { arg: id, params }) {
  const path = `instances/${encodeURIComponent(id)}`
  const [doc, tree] = await Promise.all([getJson(path), getJson(`${path}/tree`)])
  const { instance: i, status: s } = doc
  const executionId = Number(params.get('execution') ?? i.currentExecutionId)
  const history = await getJson(`${path}/history`, { execution: executionId })
  const executionRows = doc.executions.map((e) => [
    e.executionId === executionId ? h('strong', {}, String(e.executionId)) : h('a', { href: instanceHref(id, e.executionId) }, String(e.executionId)),
    badge(e.status),
    time(e.startedAt),
    time(e.completedAt),
    String(e.eventCount),
  ])
  const running = doc.executions.find((e) => e.executionId === executionId)?.status === 'Running'
  const lastEvent = history.events.at(-1)?.timestampMs ?? 0
  add(root, 
    h('h1', { class: 'instance-title' }, h('span', { class: 'instance-id' }, i.instanceId), ' ', badge(i.status)),
    fields([
      ['Orchestration', `${i.orchestrationName} ${i.orchestrationVersion}`],
      ['Error category', s.errorCategory],
      ['Output', s.status === 'Completed' ? h('code', {}, clip(json(s.output), 2000)) : undefined],
      ['Error', s.error === undefined ? undefined : h('pre', { class: 'error-text' }, s.error)],
      ['Custom status', s.customStatus],
      ['Parent', i.parentInstanceId ? h('a', { href: instanceHref(i.parentInstanceId) }, i.parentInstanceId) : undefined],
      ['Current execution', String(i.currentExecutionId)],
      ['Created (UTC)', time(i.createdAt)],
      ['Updated (UTC)', time(i.updatedAt)],
    ]),
    h('h2', {}, `Executions (${doc.executionCount})`),
    table(['Execution', 'Status', 'Started', 'Completed', 'Events'], executionRows, { class: 'executions' }),
    h('h2', {}, `History of execution ${executionId}: ${history.events.length} events`),
    timeline(history.events, { endMs: running ? Math.max(Date.now(), lastEvent) : lastEvent }),
    eventsTable(history.events),
    treeSection(tree, i.instanceId),
  )
}
