// One execution's history as a timeline (inline SVG): an event and the event that completes it
// (its sourceEventId) make a bar, from when it was scheduled to when it ended; what is still
// awaited runs to the end, dashed; everything else is a point.

import { svg, h, duration, clip } from './dom.js'

const WIDTH = 960
const LABEL_WIDTH = 260
const ROW = 20
const TOP = 26
/** Rows drawn; the events table below lists every event. */
const MAX_ROWS = 150
/** Kinds that wait for another event: without it, the wait is still open. */
const AWAITING = new Set(['ActivityScheduled', 'TimerCreated', 'SubOrchestrationScheduled', 'ExternalSubscribed', 'QueueSubscribed'])

function payload(event) {
  try {
    return event.data === undefined ? undefined : JSON.parse(event.data)
  } catch {
    return undefined
  }
}

function label(event) {
  const data = payload(event)
  switch (event.kind) {
    case 'ActivityScheduled':
      return `activity ${data?.name ?? ''}`
    case 'SubOrchestrationScheduled':
      return `sub-orchestration ${data?.name ?? ''} (${data?.instance ?? ''})`
    case 'TimerCreated':
      return 'timer'
    case 'ExternalSubscribed':
    case 'QueueSubscribed':
      return `wait for ${data?.name ?? ''}`
    default:
      return event.kind
  }
}

function outcome(end) {
  if (end === null) return 'pending'
  return /Failed|Cancel/.test(end.kind) ? 'failed' : 'done'
}

/** Rows of the timeline: `{ start, end }` spans (end null while awaited) and `{ start }` points. */
function rowsOf(events) {
  const ids = new Set(events.map((e) => e.eventId))
  const completion = new Map()
  for (const e of events) if (e.sourceEventId !== undefined && ids.has(e.sourceEventId)) completion.set(e.sourceEventId, e)
  const rows = []
  for (const e of events) {
    if (completion.has(e.eventId)) rows.push({ start: e, end: completion.get(e.eventId), span: true })
    else if (AWAITING.has(e.kind)) rows.push({ start: e, end: null, span: true })
    else if (e.sourceEventId === undefined || !ids.has(e.sourceEventId)) rows.push({ start: e, span: false })
  }
  return rows
}

/** The timeline of `events`; `endMs` is where open waits end (now, for a running instance). */
export function timeline(events, { endMs }) {
  if (events.length === 0) return h('p', { class: 'empty' }, 'No events.')
  const t0 = events[0].timestampMs
  const t1 = Math.max(endMs, ...events.map((e) => e.timestampMs))
  const total = Math.max(t1 - t0, 1)
  const all = rowsOf(events)
  const rows = all.slice(0, MAX_ROWS)
  const plot = WIDTH - LABEL_WIDTH - 20
  const x = (ms) => LABEL_WIDTH + ((ms - t0) / total) * plot
  const height = TOP + rows.length * ROW + 8
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => [
    svg('line', { x1: LABEL_WIDTH + f * plot, x2: LABEL_WIDTH + f * plot, y1: TOP - 6, y2: height, class: 'grid' }),
    svg('text', { x: LABEL_WIDTH + f * plot, y: TOP - 10, class: 'tick', 'text-anchor': f === 1 ? 'end' : f === 0 ? 'start' : 'middle' }, `+${duration(f * total)}`),
  ])
  const drawn = rows.map((row, i) => {
    const y = TOP + i * ROW
    const start = x(row.start.timestampMs)
    const title = svg('title', {}, `#${row.start.eventId} ${row.start.kind}${row.end ? ` → #${row.end.eventId} ${row.end.kind}` : ''}`)
    const mark = row.span
      ? svg('rect', {
          x: start,
          y: y + 4,
          width: Math.max(x(row.end ? row.end.timestampMs : t1) - start, 3),
          height: ROW - 8,
          rx: 2,
          class: `bar bar-${outcome(row.end)}`,
        }, title)
      : svg('circle', { cx: start, cy: y + ROW / 2, r: 4, class: `point point-${/Failed/.test(row.start.kind) ? 'failed' : 'done'}` }, title)
    return svg('g', { class: 'row' }, svg('text', { x: 4, y: y + ROW - 6, class: 'label' }, clip(label(row.start), 38)), mark)
  })
  const note = all.length > rows.length ? h('p', { class: 'note' }, `The first ${rows.length} of ${all.length} rows are drawn; the table below has every event.`) : null
  return h(
    'div',
    { class: 'timeline' },
    svg('svg', { viewBox: `0 0 ${WIDTH} ${height}`, width: WIDTH, height, role: 'img', 'aria-label': 'history timeline' }, ticks, drawn),
    note,
  )
}
