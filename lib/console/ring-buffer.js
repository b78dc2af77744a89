'use strict'

/** The last `capacity` items pushed, oldest first; older ones are dropped. */
class RingBuffer {
  #items
  #next = 0
  #size = 0

  constructor(capacity) {
    this.capacity = capacity
    this.#items = new Array(capacity)
  }

  push(item) {
    this.#items[this.#next] = item
    this.#next = (this.#next + 1) % this.capacity
    this.#size = Math.min(this.#size + 1, this.capacity)
  }

  toArray() {
    const start = (this.#next - this.#size + this.capacity) % this.capacity
    return Array.from({ length: this.#size }, (_, i) => this.#items[(start + i) % this.capacity])
  }
}

module.exports = { RingBuffer }
