'use strict'

// Plain-text output of the `steadfast` commands: aligned tables and label/value blocks, no
// colours. Every value comes from the store, so control characters (which could drive the
// terminal) and bidirectional overrides are shown escaped.

const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const ESCAPES = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function printable(text) {
  return String(text).replace(UNPRINTABLE, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** One cell: `-` for an absent value, otherwise the value's text, escaped. */
function cell(value) {
  return value === undefined || value === null || value === '' ? '-' : printable(value)
}

/** At most `max` characters, the cut marked with `…`. */
function clip(text, max) {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** A time in ms since the epoch as ISO 8601 UTC, `-` when absent. */
function time(ms) {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : '-'
}

/** A JSON value on one line, clipped to `max` characters (`-` when absent). */
function jsonCell(value, max = 80) {
  return value === undefined ? '-' : clip(cell(JSON.stringify(value)), max)
}

/** Rows of cells under `headers`, columns padded to their widest cell; no trailing blanks. */
function renderTable(headers, rows) {
  const lines = [headers, ...rows.map((r) => r.map(cell))]
  const widths = headers.map((_, i) => Math.max(...lines.map((l) => l[i].length)))
  return lines.map((l) => l.map((c, i) => (i === l.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n') + '\n'
}

/** `label: value` lines with the values aligned; `pairs` is `[label, value][]`. */
function renderFields(pairs) {
  const width = Math.max(...pairs.map(([label]) => label.length)) + 1
  return pairs.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${cell(value)}`).join('\n') + '\n'
}

/** `1 instance` / `3 instances`. */
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

module.exports = { printable, cell, clip, time, jsonCell, renderTable, renderFields, count }
