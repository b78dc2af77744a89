'use strict'

// The console's JSON API under /api/. Reading routes run a `steadfast` command's own parse and
// run (the shapes of its --json output, docs/cli.md), so the page sees what `--json` prints;
// requeue and purge are the only writes, and only with --allow-writes.

const list = require('../cli/commands/list')
const describe = require('../cli/commands/describe')
const history = require('../cli/commands/history')
const tree = require('../cli/commands/tree')
const deadLetters = require('../cli/commands/dead-letters')
const { parseInteger } = require('../cli/args')
const { UsageError, asCliError } = require('../cli/errors')
const { HttpError } = require('./http')
const { badRequest, queryValues, parameterMessage, pathInteger, pathText } = require('./query')

/** The request header a write must carry: a page of another site cannot send it (CORS). */
const WRITE_HEADER = 'x-steadfast-console'

/** The library's option names of the parameters, for its messages (`options.orchestrationName`). */
const LIBRARY_NAMES = Object.freeze({ orchestrationName: 'name', cursor: 'cursor', limit: 'limit', instanceId: 'instance', afterId: 'after' })

const STATUS_OF_CODE = Object.freeze({ usage: 400, not_found: 404, not_running: 409, unsupported: 501 })

const PATH_PARAMS = {
  id: (segment) => pathText(segment, 'the instance id'),
  n: (segment) => pathInteger(segment, 'the dead letter id'),
}

function route(method, pattern, spec) {
  return { method, segments: pattern.split('/'), query: [], writes: false, ...spec }
}

const ROUTES = [
  route('GET', 'api/config', { read: (api) => api.config }),
  route('GET', 'api/samples', { query: ['since'], read: (api, params, values) => api.sampler.snapshot(sinceOf(values)) }),
  route('GET', 'api/instances', { query: ['status', 'name', 'limit', 'cursor'], command: list, args: () => [] }),
  route('GET', 'api/instances/:id', { command: describe, args: ({ id }) => [id] }),
  route('GET', 'api/instances/:id/history', { query: ['execution'], command: history, args: ({ id }) => [id] }),
  route('GET', 'api/instances/:id/tree', { command: tree, args: ({ id }) => [id] }),
  route('GET', 'api/dead-letters', { query: ['instance', 'after', 'limit'], command: deadLetters, args: () => ['list'] }),
  route('GET', 'api/dead-letters/:n', { command: deadLetters, args: ({ n }) => ['show', n] }),
  route('POST', 'api/dead-letters/:n/requeue', { writes: true, command: deadLetters, args: ({ n }) => ['requeue', n] }),
  route('POST', 'api/dead-letters/purge', {
    writes: true,
    query: ['instance', 'dead-before'],
    command: deadLetters,
    args: () => ['purge'],
    values: { yes: true },
  }),
]

function sinceOf(values) {
  return values.since === undefined ? 0 : parseInteger('--since', values.since, { min: 0, max: Number.MAX_SAFE_INTEGER })
}

/** The path parameters of `segments` if they fit `route`'s pattern, else null. */
function matchPath(route, segments) {
  if (route.segments.length !== segments.length) return null
  const raw = {}
  for (let i = 0; i < segments.length; i++) {
    const want = route.segments[i]
    if (want.startsWith(':')) raw[want.slice(1)] = segments[i]
    else if (want !== segments[i]) return null
  }
  return raw
}

function checkWrite(api, route, headers) {
  if (!route.writes) return
  if (!api.writesAllowed) {
    throw new HttpError(403, 'read_only', 'this console was started without --allow-writes: requeue and purge are refused')
  }
  if (headers[WRITE_HEADER] !== '1') {
    throw new HttpError(403, 'forbidden', `a write must carry the header ${WRITE_HEADER}: 1 (the console's page sends it)`)
  }
}

async function runRoute(api, route, rawParams, searchParams) {
  let values
  let opts
  try {
    const params = Object.fromEntries(Object.entries(rawParams).map(([k, v]) => [k, PATH_PARAMS[k](v)]))
    values = queryValues(searchParams, route.query)
    if (route.read) return route.read(api, params, values)
    opts = route.command.parse({ ...values, ...route.values }, route.args(params))
  } catch (e) {
    if (e instanceof UsageError) throw badRequest(parameterMessage(e.message, LIBRARY_NAMES))
    throw e
  }
  try {
    return (await route.command.run(api.client, opts, api.store)).json
  } catch (e) {
    const c = asCliError(e)
    if (c.code === 'internal') throw new HttpError(500, 'internal', `unexpected error: ${e?.message ?? e}`)
    const message = c.code === 'usage' ? parameterMessage(c.message, LIBRARY_NAMES) : c.message
    throw new HttpError(STATUS_OF_CODE[c.code] ?? 500, c.code === 'usage' ? 'bad_request' : c.code, message)
  }
}

/**
 * The API: `handle(method, segments, searchParams, headers)` resolves to the JSON value of
 * the response, or rejects with an HttpError. `segments` are the path's raw segments.
 */
function createApi({ client, storeKind, config, sampler, writesAllowed }) {
  const api = { client, store: { kind: storeKind }, config, sampler, writesAllowed }
  return {
    async handle(method, segments, searchParams, headers) {
      const matches = ROUTES.map((r) => [r, matchPath(r, segments)]).filter(([, params]) => params !== null)
      if (matches.length === 0) throw new HttpError(404, 'not_found', `there is no API path /${segments.join('/')}`)
      const found = matches.find(([r]) => r.method === method)
      if (!found) {
        const allow = [...new Set(matches.map(([r]) => r.method))].join(', ')
        throw Object.assign(new HttpError(405, 'method_not_allowed', `${method} is not allowed here (allowed: ${allow})`), { allow })
      }
      const [r, rawParams] = found
      checkWrite(api, r, headers)
      return runRoute(api, r, rawParams, searchParams)
    },
  }
}

module.exports = { createApi, WRITE_HEADER }
