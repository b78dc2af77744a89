'use strict'

// The database URL: validated before any connection, shown only with its password masked,
// and every message that leaves a command is scrubbed of the password (raw and percent-decoded).

const { UsageError } = require('./errors')

const SCHEMES = new Set(['postgres:', 'postgresql:'])

function safeDecode(s) {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

/** The password of a URL-shaped text (userinfo or `password=` parameter), raw and decoded. */
function urlSecrets(raw) {
  const secrets = new Set()
  const userinfo = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^@/?#]*)@/.exec(raw)
  if (userinfo && userinfo[1].includes(':')) {
    const pw = userinfo[1].slice(userinfo[1].indexOf(':') + 1)
    if (pw) {
      secrets.add(pw)
      secrets.add(safeDecode(pw))
    }
  }
  for (const m of raw.matchAll(/[?&]password=([^&#]*)/gi)) {
    if (m[1]) {
      secrets.add(m[1])
      secrets.add(safeDecode(m[1]))
    }
  }
  return [...secrets]
}

/**
 * Check the URL's shape and return `{ url, display, secrets }`: `display` masks the password
 * (and drops the query string, which may carry one); `secrets` are the strings to scrub.
 */
function inspectUrl(raw) {
  // Collect the secrets first, from the raw text, so even an unparseable URL cannot leak them.
  const secrets = urlSecrets(raw)
  const refuse = (message) => Object.assign(new UsageError(message), { secrets })
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw)
  if (!scheme || !SCHEMES.has(`${scheme[1].toLowerCase()}:`) || !/^[A-Za-z]+:\/\//.test(raw)) {
    throw refuse('--url must start with postgres:// or postgresql://')
  }
  let u
  try {
    u = new URL(raw)
  } catch {
    throw refuse('--url is not a valid URL (check the host, port and percent-encoding)')
  }
  if (u.port !== '' && (Number(u.port) < 1 || Number(u.port) > 65535)) {
    throw refuse(`--url has an invalid port (${u.port})`)
  }
  const user = u.username ? safeDecode(u.username) : ''
  const auth = user ? `${user}${u.password ? ':***' : ''}@` : u.password ? ':***@' : ''
  const display = `${u.protocol}//${auth}${u.host}${u.pathname}${u.search ? '?…' : ''}`
  return { url: raw, display, secrets }
}

/**
 * Replace every secret in `text` with ***; with `display`, also every postgres URL (for error
 * messages, which may quote one) with the masked form.
 */
function scrub(text, secrets = [], display = null) {
  let out = String(text)
  if (display !== null) {
    // Only URLs with a password part; the masked form itself is left alone.
    out = out.replace(/postgres(?:ql)?:\/\/[^\s@/]*:[^\s@/]*@\S*/gi, (m) => (m.startsWith(display) ? m : display))
  }
  // Longest first, so a secret containing another is masked whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) {
    if (s) out = out.split(s).join('***')
  }
  return out
}

module.exports = { inspectUrl, urlSecrets, scrub }
