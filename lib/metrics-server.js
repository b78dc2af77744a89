'use strict'

// `runtime.serveMetrics()`: the runtime's Prometheus text on one HTTP path, for a scraper.

const http = require('node:http')
const { once } = require('node:events')

const { applyOptionalTable } = require('./options')
const { METRICS_SERVER_FIELDS } = require('./option-tables')
const { rangeError } = require('./errors')

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * Listen on `host:port` and answer `GET path` with `render()`'s text. Resolves once
 * listening, to `{ url, port, close() }`.
 */
async function serveMetrics(render, options) {
  const o = { ...defaults(), ...applyOptionalTable('options', options, METRICS_SERVER_FIELDS) }
  if (!o.path.startsWith('/')) throw rangeError(`options.path must start with "/" (got ${JSON.stringify(o.path)})`)
  const server = http.createServer((req, res) => answer(render, o.path, req, res))
  server.listen(o.port, o.host)
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e))])
  const { port } = server.address()
  const host = o.host.includes(':') ? `[${o.host}]` : o.host
  return {
    url: `http://${host}:${port}${o.path}`,
    port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

function defaults() {
  return Object.fromEntries(Object.entries(METRICS_SERVER_FIELDS).map(([k, rule]) => [k, rule.default]))
}

async function answer(render, path, req, res) {
  const url = new URL(req.url, 'http://localhost')
  if (url.pathname !== path) return send(res, 404, 'not found\n')
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' })
  let text
  try {
    text = await render()
  } catch (e) {
    return send(res, 500, `metrics unavailable: ${e?.message ?? e}\n`)
  }
  send(res, 200, req.method === 'HEAD' ? '' : text, { 'content-type': CONTENT_TYPE })
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers })
  res.end(body)
}

module.exports = { serveMetrics }
