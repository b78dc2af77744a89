'use strict'

// What the console's charts show: every `sampleMs`, the queue depths, the store-wide counts
// and the number of dead letters, kept in a bounded ring buffer. One sample at a time: the
// next is taken `sampleMs` after the previous one ended, so a slow database is never queued up.

const { MAX_DEAD_LETTER_PAGE } = require('../options')
const { RingBuffer } = require('./ring-buffer')

/** 30 minutes at the default 2 s. */
const CAPACITY = 900

/** Dead letters are counted up to one page; a larger count is reported as capped. */
async function countDeadLetters(client) {
  const page = await client.listDeadLetters({ limit: MAX_DEAD_LETTER_PAGE })
  return { deadLetters: page.length, deadLettersCapped: page.length === MAX_DEAD_LETTER_PAGE }
}

class Sampler {
  #client
  #buffer
  #timer = null
  #inFlight = null
  #stopped = false

  /** `withDeadLetters`: the store keeps dead letters (PostgreSQL); `scrubMessage` cleans errors. */
  constructor({ client, sampleMs, withDeadLetters, scrubMessage, capacity = CAPACITY }) {
    this.#client = client
    this.#buffer = new RingBuffer(capacity)
    this.sampleMs = sampleMs
    this.withDeadLetters = withDeadLetters
    this.scrubMessage = scrubMessage
  }

  start() {
    this.#schedule(0)
  }

  #schedule(delayMs) {
    this.#timer = setTimeout(() => {
      this.#inFlight = this.#sample().finally(() => {
        this.#inFlight = null
        if (!this.#stopped) this.#schedule(this.sampleMs)
      })
    }, delayMs)
  }

  async #sample() {
    const at = Date.now()
    try {
      const [queues, metrics, letters] = await Promise.all([
        this.#client.getQueueDepths(),
        this.#client.getSystemMetrics(),
        this.withDeadLetters ? countDeadLetters(this.#client) : { deadLetters: null, deadLettersCapped: false },
      ])
      this.#buffer.push({ at, queues, metrics, ...letters })
    } catch (e) {
      this.#buffer.push({ at, error: this.scrubMessage(String(e?.message ?? e)) })
    }
  }

  /** Stop sampling; resolves once a sample being taken has ended. */
  async stop() {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#inFlight
  }

  /** The samples taken after `sinceMs` (ms since the epoch), oldest first. */
  snapshot(sinceMs = 0) {
    const samples = this.#buffer.toArray().filter((s) => s.at > sinceMs)
    return { sampleMs: this.sampleMs, capacity: this.#buffer.capacity, samples }
  }
}

module.exports = { Sampler, CAPACITY }
