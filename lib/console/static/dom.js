// Building the page. Every value goes in as a text node or an attribute value, never as
// markup: instance ids, outputs and errors are user data and must not become elements.

const SVG_NS = 'http://www.w3.org/2000/svg'

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : String(child))
  }
}

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  append(el, children)
  return el
}

/** An HTML element: `h('a', { href }, 'text', otherNode)`; `on…` attributes add listeners. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children)
}

/** An SVG element, as `h`. */
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children)
}

/** Append `children` to `el`, skipping absent ones (the DOM's own append would show "null"). */
export function add(el, ...children) {
  append(el, children)
}

/** Replace the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren()
  append(el, children)
}

/** A time in ms since the epoch as `YYYY-MM-DD HH:MM:SS.mmm` UTC. */
export function time(ms) {
  return typeof ms === 'number' ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '–'
}

/** A duration in ms, short: `850 ms`, `4.2 s`, `3.1 min`. */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`
  return `${(ms / 3_600_000).toFixed(1)} h`
}

/** At most `max` characters, the cut marked with `…`. */
export function clip(text, max) {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** A value as one line of JSON (`–` when absent). */
export function json(value) {
  return value === undefined ? '–' : JSON.stringify(value)
}

/** The status of an instance or execution as a coloured badge. */
export function badge(status) {
  return h('span', { class: `badge badge-${String(status).toLowerCase()}` }, status)
}

/** The hash link of an instance's page. */
export function instanceHref(id, execution) {
  return `#/instance/${encodeURIComponent(id)}${execution === undefined ? '' : `?execution=${execution}`}`
}

/** `<dl>` of `[label, value]` pairs; absent values are left out. */
export function fields(pairs) {
  return h(
    'dl',
    { class: 'fields' },
    pairs.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]),
  )
}

/** A table with a header row; `rows` are arrays of cells (text or nodes). */
export function table(headers, rows, attrs = {}) {
  return h(
    'table',
    attrs,
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))),
  )
}
