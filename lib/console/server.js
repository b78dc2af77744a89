'use strict'

// The web console's HTTP server (`steadfast console`, lib/cli/commands/console.js): the page
// from ./static, the JSON API of ./routes under /api/, and the sampler behind its charts. The
// database URL stays here: neither the page nor any API response carries it.

const http = require('node:http')
const { HttpError, send, sendJson, sendError } = require('./http')
const { createApi } = require('./routes')
const { Sampler } = require('./sampler')
const { loadStaticFiles } = require('./static-files')

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i

/**
 * On a loopback address, only requests that name it (or localhost) as their Host: a page of
 * another site that rebinds its own name to 127.0.0.1 must not read the API.
 */
function hostCheck(host, port) {
  if (!LOOPBACK.test(host)) return () => true
  const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`].map((h) => h.toLowerCase()))
  return (hostHeader) => typeof hostHeader === 'string' && allowed.has(hostHeader.toLowerCase())
}

function urlOf(address) {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}/`
}

function listen(server, host, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port }, () => {
      server.off('error', reject)
      resolve(server.address())
    })
  })
}

/**
 * Start the console: listens on `host`:`port` and samples every `sampleMs`. Resolves to
 * `{ url, close() }`; `close` stops the sampler and the server, waiting for requests being served.
 */
async function startConsole({ client, storeKind, schema, host, port, writesAllowed, sampleMs, scrubMessage, scrubValue }) {
  const sampler = new Sampler({ client, sampleMs, withDeadLetters: storeKind === 'postgres', scrubMessage })
  const config = { storeKind, schema, writesAllowed, sampleMs }
  const api = createApi({ client, storeKind, config, sampler, writesAllowed })
  const files = loadStaticFiles()
  const inFlight = new Set()
  let hostAllowed = () => false

  async function serve(req, res) {
    const url = new URL(req.url, 'http://console.invalid')
    if (!hostAllowed(req.headers.host)) {
      return sendError(res, new HttpError(421, 'wrong_host', 'this console answers only to the address it listens on'), scrubValue)
    }
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      const segments = url.pathname.slice(1).split('/')
      try {
        return sendJson(res, 200, await api.handle(req.method, segments, url.searchParams, req.headers), scrubValue)
      } catch (e) {
        const error = e instanceof HttpError ? e : new HttpError(500, 'internal', scrubMessage(`unexpected error: ${e?.message ?? e}`))
        return sendError(res, error, (m) => scrubValue(scrubMessage(m)), e?.allow ? { Allow: e.allow } : {})
      }
    }
    const file = files.get(url.pathname)
    if (!file) return send(res, 404, 'text/plain; charset=utf-8', 'Not found\n')
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed\n', { Allow: 'GET, HEAD' })
    return send(res, 200, file.contentType, req.method === 'HEAD' ? '' : file.body)
  }

  const server = http.createServer((req, res) => {
    const served = serve(req, res)
      .catch(() => {
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'Internal error\n')
        else res.destroy()
      })
      .finally(() => inFlight.delete(served))
    inFlight.add(served)
  })
  const address = await listen(server, host, port)
  hostAllowed = hostCheck(host, address.port)
  sampler.start()
  return {
    url: urlOf(address),
    async close() {
      server.close()
      server.closeIdleConnections()
      await sampler.stop()
      await Promise.allSettled([...inFlight])
      server.closeAllConnections()
    },
  }
}

module.exports = { startConsole }
