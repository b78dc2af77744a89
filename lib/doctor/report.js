'use strict'

// Turn checks into the verdict, the JSON object and the text report.

const ORDER = [
  'orchestrator_queue',
  'worker_queue',
  'oldest_ready_message',
  'attempts_over_max',
  'expired_leases',
  'leases_born_expired',
  'longest_live_lease',
  'dead_letters',
  'lock_waiters',
  'fetch_latency',
]

/** Text-only extra lines per check; a symbol key, so JSON.stringify leaves it out. */
const LINES = Symbol('lines')

function buildReport(meta, checks) {
  const sorted = [...checks].sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name))
  const failing = sorted.filter((c) => c.status === 'fail')
  const warning = sorted.filter((c) => c.status === 'warn')
  const healthy = failing.length === 0
  return {
    schema: meta.schema,
    kind: meta.kind,
    schemaVersion: meta.schemaVersion,
    database: meta.database,
    checkedAt: meta.checkedAt,
    maxAttempts: meta.maxAttempts,
    sampleSeconds: meta.sampleSeconds,
    healthy,
    verdict: healthy ? 'HEALTHY' : 'UNHEALTHY',
    reasons: failing.map((c) => `${c.name}: ${c.detail}`),
    warnings: warning.map((c) => `${c.name}: ${c.detail}`),
    checks: sorted.map(({ name, status, value, detail }) => ({ name, status, value, detail })),
    // Text-only extra lines; not part of the JSON object.
    [LINES]: new Map(sorted.map((c) => [c.name, c.lines || []])),
  }
}

function verdictLine(report) {
  const names = (status) => report.checks.filter((c) => c.status === status).map((c) => c.name)
  if (!report.healthy) {
    const f = names('fail')
    return `VERDICT: UNHEALTHY (${f.length} failing: ${f.join(', ')})`
  }
  const w = names('warn')
  return w.length ? `VERDICT: HEALTHY with ${w.length} warning${w.length === 1 ? '' : 's'} (${w.join(', ')})` : 'VERDICT: HEALTHY'
}

/** Greedy word wrap: the first line gets `first` columns, the rest `rest`. */
function wrap(text, first, rest) {
  const words = []
  for (const w of String(text).split(' ')) {
    // Keep "850 ms" and "1.2 s" on one line.
    if (words.length && /^(ms|s)[,;.)]*$/.test(w) && /\d$/.test(words[words.length - 1])) words[words.length - 1] += ` ${w}`
    else words.push(w)
  }
  const lines = []
  let line = ''
  for (const w of words) {
    const limit = lines.length === 0 ? first : rest
    if (line && line.length + 1 + w.length > limit) {
      lines.push(line)
      line = w
    } else {
      line = line ? `${line} ${w}` : w
    }
  }
  lines.push(line)
  return lines
}

function renderText(report, { width = 100 } = {}) {
  const out = []
  out.push(
    `steadfast doctor: schema "${report.schema}" (${report.kind}` +
      `${report.schemaVersion !== null ? `, schema version ${report.schemaVersion}` : ''}) on ${report.database}`,
  )
  out.push(
    `max_attempts ${report.maxAttempts} · sampled ${report.sampleSeconds} s · database clock ${report.checkedAt} · read-only`,
  )
  out.push('')
  const nameWidth = Math.max(...report.checks.map((c) => c.name.length))
  const lines = report[LINES]
  const pad = ' '.repeat(2 + 4 + 2 + nameWidth + 2)
  const avail = Math.max(40, width - pad.length)
  for (const c of report.checks) {
    const tag = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' }[c.status]
    const [head, ...tail] = wrap(c.detail, avail, avail)
    out.push(`  ${tag}  ${c.name.padEnd(nameWidth)}  ${head}`)
    for (const t of tail) out.push(pad + t)
    for (const l of (lines && lines.get(c.name)) || []) {
      const [h, ...more] = wrap(l, avail - 2, avail - 2)
      out.push(`${pad}- ${h}`)
      for (const t of more) out.push(`${pad}  ${t}`)
    }
  }
  out.push('')
  out.push(verdictLine(report))
  for (const r of report.reasons) {
    const [h, ...more] = wrap(r, width - 4, width - 4)
    out.push(`  - ${h}`)
    for (const t of more) out.push(`    ${t}`)
  }
  return out.join('\n') + '\n'
}

function renderJson(report) {
  return JSON.stringify(report, null, 2) + '\n'
}

module.exports = { buildReport, renderText, renderJson, verdictLine, ORDER }
