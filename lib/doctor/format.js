'use strict'

/** A duration in seconds as a short human string: 850 ms, 12.3 s, 4m 05s, 2h 10m, 5d 3h. */
function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '?'
  const neg = seconds < 0
  let s = Math.abs(seconds)
  let out
  if (s < 1) out = `${Math.round(s * 1000)} ms`
  else if (s < 60) out = `${s < 10 ? s.toFixed(1) : Math.round(s)} s`
  else if (s < 3600) out = `${Math.floor(s / 60)}m ${String(Math.floor(s % 60)).padStart(2, '0')}s`
  else if (s < 86400) out = `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
  else out = `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`
  return neg ? `-${out}` : out
}

function fmtMs(ms) {
  return ms === null || ms === undefined ? '?' : fmtDuration(ms / 1000)
}

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`
}

/** Percentiles of a list of numbers (nearest rank); null fields when empty. */
function stats(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (v.length === 0) return { count: 0, p50: null, p95: null, max: null }
  const at = (p) => v[Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1))]
  const r = (x) => Math.round(x)
  return { count: v.length, p50: r(at(0.5)), p95: r(at(0.95)), max: r(v[v.length - 1]) }
}

function round(x, digits = 3) {
  if (x === null || x === undefined) return null
  const f = 10 ** digits
  return Math.round(x * f) / f
}

module.exports = { fmtDuration, fmtMs, plural, stats, round }
