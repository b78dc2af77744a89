// Queue depths, instance counts and dead letters over time: the server's samples (GET
// /api/samples, one every --sample-ms) drawn as line charts in inline SVG, refreshed with the
// samples taken since the last fetch.

import { getJson } from './api.js'
import { add, h, svg, replace, time } from './dom.js'

const WIDTH = 460
const HEIGHT = 200
const PAD = { left: 44, right: 10, top: 12, bottom: 24 }

const CHARTS = [
  {
    id: 'queues',
    title: 'Queue depths (messages waiting)',
    series: [
      ['orchestrator', (s) => s.queues?.orchestratorQueue],
      ['worker', (s) => s.queues?.workerQueue],
      ['timer', (s) => s.queues?.timerQueue],
    ],
  },
  {
    id: 'instances',
    title: 'Instances',
    series: [
      ['running', (s) => s.metrics?.runningInstances],
      ['completed', (s) => s.metrics?.completedInstances],
      ['failed', (s) => s.metrics?.failedInstances],
    ],
  },
  { id: 'dead-letters', title: 'Dead letters', series: [['dead letters', (s) => s.deadLetters]] },
]

/** The smallest of 1, 2, 5 × 10^n at or above `max`, at least 2 (so the middle tick is whole). */
function niceMax(max) {
  if (max <= 2) return 2
  const p = 10 ** Math.floor(Math.log10(max))
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= max)
}

/** One line chart of `samples`; samples without a value for a series leave a gap. */
function lineChart(chart, samples) {
  const points = samples.filter((s) => !s.error)
  const plotW = WIDTH - PAD.left - PAD.right
  const plotH = HEIGHT - PAD.top - PAD.bottom
  const t0 = points[0]?.at ?? 0
  const t1 = points.at(-1)?.at ?? 1
  const values = chart.series.flatMap(([, read]) => points.map(read)).filter((v) => typeof v === 'number')
  const top = niceMax(Math.max(0, ...values))
  const x = (at) => PAD.left + (t1 === t0 ? plotW : ((at - t0) / (t1 - t0)) * plotW)
  const y = (v) => PAD.top + plotH - (v / top) * plotH
  const grid = [0, 0.5, 1].map((f) => [
    svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(f * top), y2: y(f * top), class: 'grid' }),
    svg('text', { x: PAD.left - 6, y: y(f * top) + 4, class: 'tick', 'text-anchor': 'end' }, String(Math.round(f * top))),
  ])
  const lines = chart.series.map(([name, read], i) => {
    const coords = points.filter((s) => typeof read(s) === 'number').map((s) => `${x(s.at).toFixed(1)},${y(read(s)).toFixed(1)}`)
    return svg('polyline', { points: coords.join(' '), class: `series series-${i}`, 'data-series': name })
  })
  const axis = points.length
    ? [
        svg('text', { x: PAD.left, y: HEIGHT - 6, class: 'tick' }, time(t0).slice(11, 19)),
        svg('text', { x: WIDTH - PAD.right, y: HEIGHT - 6, class: 'tick', 'text-anchor': 'end' }, time(t1).slice(11, 19)),
      ]
    : svg('text', { x: WIDTH / 2, y: HEIGHT / 2, class: 'tick', 'text-anchor': 'middle' }, 'waiting for samples…')
  const latest = points.at(-1)
  const legend = h(
    'ul',
    { class: 'legend' },
    chart.series.map(([name, read], i) => h('li', {}, h('span', { class: `swatch series-${i}` }), `${name}: ${latest && typeof read(latest) === 'number' ? read(latest) : '–'}`)),
  )
  return h(
    'figure',
    { class: 'chart', id: `chart-${chart.id}` },
    h('figcaption', {}, chart.title),
    svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': chart.title }, grid, lines, axis),
    legend,
  )
}

/** The charts page; returns the function that stops its refreshing. */
export async function chartsView(root, _route, config) {
  let samples = []
  let capacity = Infinity
  const body = h('div', { class: 'charts' })
  const footer = h('p', { class: 'note' })
  add(root, h('h1', {}, 'Charts'), body, footer)

  async function refresh() {
    const since = samples.at(-1)?.at ?? 0
    const doc = await getJson('samples', { since: since || undefined })
    capacity = doc.capacity
    samples = samples.concat(doc.samples).slice(-capacity)
    replace(body, CHARTS.map((c) => lineChart(c, samples)))
    const failed = samples.filter((s) => s.error).at(-1)
    const capped = samples.at(-1)?.deadLettersCapped ? ' Dead letters are counted up to one page (10000).' : ''
    replace(
      footer,
      `${samples.length} samples, one every ${config.sampleMs} ms (the server keeps the last ${capacity}).${capped}`,
      failed ? h('span', { class: 'error' }, ` Last failed sample at ${time(failed.at)}: ${failed.error}`) : null,
    )
  }

  await refresh()
  const timer = setInterval(() => refresh().catch((e) => replace(footer, h('span', { class: 'error' }, e.message))), config.sampleMs)
  return () => clearInterval(timer)
}
