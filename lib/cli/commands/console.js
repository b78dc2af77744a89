'use strict'

// `steadfast console`: serves the web console (lib/console/) until SIGINT or SIGTERM. The store
// is opened read-only (PostgreSQL refuses every write of its sessions) unless --allow-writes.

const { parseInteger } = require('../args')
const { UsageError, CliError } = require('../errors')
const { startConsole } = require('../../console/server')

const DEFAULT_HOST = '127.0.0.1'
const PORT = Object.freeze({ min: 0, max: 65535, default: 7070 })
const SAMPLE_MS = Object.freeze({ min: 100, max: 600_000, default: 2000 })
/** Requests are served while the sampler reads: a few more connections than a one-shot command. */
const MAX_CONNECTIONS = 4

const USAGE = `Usage: steadfast console --url URL [--host HOST] [--port N] [--allow-writes] [--sample-ms N]

Serve the web console: instances (filtered, paged), one instance's history as a timeline and
its sub-orchestrations, dead letters, and charts of queue depths and instance counts sampled
every --sample-ms. Prints the address it listens on; stops on Ctrl-C (SIGINT) or SIGTERM.
There is no login: anyone who can reach the address sees the store. The database URL never
reaches the page.

Options:
  --host HOST       the address to listen on (default ${DEFAULT_HOST}, this machine only)
  --port N          the port, integer ${PORT.min}-${PORT.max}; 0 picks a free one (default ${PORT.default})
  --allow-writes    let the page requeue and purge dead letters; without it the store is opened
                    read-only (PostgreSQL: every transaction is read-only) and the API refuses
                    writes with 403
  --sample-ms N     how often queue depths and counts are sampled for the charts, integer
                    ${SAMPLE_MS.min}-${SAMPLE_MS.max} (default ${SAMPLE_MS.default})`

/** Resolves with the name of the first of `signals` the process receives. */
function nextSignal(signals) {
  return new Promise((resolve) => {
    const handlers = signals.map((signal) => {
      const handler = () => {
        signals.forEach((s, i) => process.off(s, handlers[i]))
        resolve(signal)
      }
      process.on(signal, handler)
      return handler
    })
  })
}

module.exports = {
  name: 'console',
  usage: USAGE,
  options: {
    host: { type: 'string' },
    port: { type: 'string' },
    'allow-writes': { type: 'boolean' },
    'sample-ms': { type: 'string' },
  },
  maxPositionals: 0,
  parse(values) {
    if (values.json) throw new UsageError('--json does not apply to console (it serves a page until it is stopped)')
    if (values.host === '') throw new UsageError('--host needs a non-empty address')
    return {
      host: values.host ?? DEFAULT_HOST,
      port: values.port === undefined ? PORT.default : parseInteger('--port', values.port, PORT),
      writesAllowed: values['allow-writes'] === true,
      sampleMs: values['sample-ms'] === undefined ? SAMPLE_MS.default : parseInteger('--sample-ms', values['sample-ms'], SAMPLE_MS),
    }
  },
  storeOptions(opts) {
    return { readOnly: !opts.writesAllowed, maxConnections: MAX_CONNECTIONS }
  },
  async run(client, opts, store, { io, schema, scrubMessage, scrubValue }) {
    let console_
    try {
      console_ = await startConsole({ client, storeKind: store.kind, schema: store.kind === 'postgres' ? schema : null, scrubMessage, scrubValue, ...opts })
    } catch (e) {
      if (typeof e?.code === 'string' && (e.syscall === 'listen' || e.syscall === 'getaddrinfo')) {
        throw new CliError('listen', `cannot listen on ${opts.host} port ${opts.port}: ${e.code}`)
      }
      throw e
    }
    const stopped = nextSignal(['SIGINT', 'SIGTERM'])
    const mode = opts.writesAllowed ? 'writes allowed' : 'read-only'
    io.stdout.write(`steadfast console: listening on ${console_.url} (${mode}); Ctrl-C stops it\n`)
    const signal = await stopped
    await console_.close()
    return { text: `steadfast console: stopped (${signal})\n` }
  },
}
