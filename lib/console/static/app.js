// The console's page: a hash router over the views (#/instances, #/instance/ID,
// #/dead-letters, #/dead-letter/N, #/charts), after reading the server's configuration.

import { getJson } from './api.js'
import { h, replace } from './dom.js'
import { instancesView } from './instances.js'
import { instanceView } from './instance.js'
import { deadLettersView, deadLetterView } from './dead-letters.js'
import { chartsView } from './charts.js'

const VIEWS = {
  instances: instancesView,
  instance: instanceView,
  'dead-letters': deadLettersView,
  'dead-letter': deadLetterView,
  charts: chartsView,
}
const NAV = { instance: 'instances', 'dead-letter': 'dead-letters' }

let config = null
let rendering = 0
let stopView = null
let flash = null

/** `#/name/arg?query` → `{ name, arg, params }` (arg percent-decoded). */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '')
  const q = raw.indexOf('?')
  const path = q < 0 ? raw : raw.slice(0, q)
  const slash = path.indexOf('/')
  const name = (slash < 0 ? path : path.slice(0, slash)) || 'instances'
  let arg
  try {
    arg = slash < 0 ? undefined : decodeURIComponent(path.slice(slash + 1))
  } catch {
    arg = path.slice(slash + 1)
  }
  return { name, arg, params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) }
}

/** Show `message` above the next view, going to `hash` (default: this view again). */
function refresh(message, hash) {
  flash = message
  if (hash && hash !== location.hash) location.hash = hash
  else render()
}

async function render() {
  stopView?.()
  stopView = null
  const token = ++rendering
  const route = parseHash()
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('active', a.dataset.nav === (NAV[route.name] ?? route.name))
  const main = document.getElementById('view')
  const root = h('div', { class: `view view-${route.name}`, 'aria-busy': 'true' })
  const message = flash
  flash = null
  replace(main, message ? h('p', { class: 'flash' }, message) : null, root)
  const view = VIEWS[route.name]
  try {
    if (!view) throw new Error(`There is no page ${JSON.stringify(route.name)}.`)
    const stop = await view(root, route, config, refresh)
    if (token === rendering) stopView = stop ?? null
    else stop?.()
  } catch (e) {
    if (token === rendering) root.append(h('p', { class: 'error' }, e.message))
  } finally {
    root.removeAttribute('aria-busy')
  }
}

async function start() {
  try {
    config = await getJson('config')
  } catch (e) {
    replace(document.getElementById('view'), h('p', { class: 'error' }, `The console's server does not answer: ${e.message}`))
    return
  }
  document.getElementById('store').textContent = config.storeKind === 'postgres' ? `PostgreSQL, schema ${config.schema}` : 'SQLite'
  const mode = document.getElementById('mode')
  mode.textContent = config.writesAllowed ? 'writes allowed' : 'read-only'
  mode.classList.add(config.writesAllowed ? 'mode-writes' : 'mode-read-only')
  window.addEventListener('hashchange', render)
  await render()
}

start()
