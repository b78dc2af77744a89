// Shared by the fuzz suites: a seeded PRNG, hostile values, a fake PostgreSQL server and
// leak checks. The seed comes from STEADFAST_FUZZ_SEED (default fixed), so a failure
// names the seed and replays exactly.
import net from 'node:net'

export const SEED = Number(process.env.STEADFAST_FUZZ_SEED ?? 0x5eed)

/** mulberry32: small, fast, deterministic. */
export function rng(seed = SEED) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  }
}

/** Values of every JS type and many edge cases; names make failures readable. */
export function hostileValues() {
  return [
    ['string "3"', '3'],
    ['empty string', ''],
    ['word', 'abc'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['-1', -1],
    ['0.5', 0.5],
    ['-0.25', -0.25],
    ['1e308', 1e308],
    ['2^53', 2 ** 53],
    ['MAX_VALUE', Number.MAX_VALUE],
    ['{}', {}],
    ['[]', []],
    ['[1]', [1]],
    ['null', null],
    ['true', true],
    ['BigInt 10n', 10n],
    ['Symbol', Symbol('x')],
    ['function', () => 1],
    ['Date', new Date(0)],
    ['boxed Number', new Number(3)],
    ['300-char string', 'x'.repeat(300)],
    ['NUL string', 'a\0b'],
    ['lone surrogate', 'a\ud800'],
  ]
}

/** A TCP server that counts connections and hangs up (or runs `serve`). */
export async function fakeServer(serve = (socket) => socket.destroy()) {
  let accepted = 0
  const sockets = new Set()
  const server = net.createServer((socket) => {
    accepted++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    serve(socket)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: server.address().port,
    get accepted() {
      return accepted
    },
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/**
 * Just enough PostgreSQL protocol to ask for a cleartext password and refuse the login
 * with a message that echoes the password (a hostile or buggy server), so tests prove
 * scrubbing rather than the server's discretion.
 */
export function echoPasswordServer(socket) {
  let buffer = Buffer.alloc(0)
  let stage = 'startup'
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      if (stage === 'startup') {
        if (buffer.length < 4) return
        const len = buffer.readUInt32BE(0)
        if (buffer.length < len) return
        const code = buffer.readUInt32BE(4)
        buffer = buffer.subarray(len)
        if (len === 8 && code === 80877103) {
          socket.write('N')
          continue
        }
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])) // AuthenticationCleartextPassword
        stage = 'password'
      } else if (stage === 'password') {
        if (buffer.length < 5) return
        const len = buffer.readUInt32BE(1)
        if (buffer.length < len + 1) return
        const password = buffer.subarray(5, len).toString('utf8').replace(/\0$/, '')
        buffer = buffer.subarray(len + 1)
        const fields = Buffer.concat([
          Buffer.from('SFATAL\0VFATAL\0C28P01\0', 'utf8'),
          Buffer.from(`Mpassword authentication failed (you sent ${password})\0`, 'utf8'),
          Buffer.from([0]),
        ])
        const head = Buffer.alloc(5)
        head.write('E', 0)
        head.writeUInt32BE(fields.length + 4, 1)
        socket.end(Buffer.concat([head, fields]))
        stage = 'done'
        return
      } else {
        return
      }
    }
  })
}

/** Every text an error exposes: message, stack, code and its whole cause chain. */
export function errorTexts(e) {
  const out = []
  for (let cur = e, depth = 0; cur != null && depth < 10; cur = cur.cause, depth++) {
    if (typeof cur !== 'object') {
      out.push(String(cur))
      break
    }
    out.push(String(cur.message), String(cur.stack), String(cur.code))
    try {
      out.push(JSON.stringify(cur))
    } catch {}
  }
  return out
}

export function assertNoSecret(assert, e, secrets) {
  for (const text of errorTexts(e)) {
    for (const secret of secrets.filter((s) => s.length > 0)) {
      assert.ok(!text.includes(secret), `secret ${JSON.stringify(secret)} leaked in: ${text}`)
    }
  }
}
