'use strict'

// Responses of the console's server: JSON with its errors, static files, and the headers every
// response carries (the page loads nothing but its own files and talks to nothing but its API).

/** An API refusal: `status` is the HTTP status, `code` what the JSON error says. */
class HttpError extends Error {
  constructor(status, code, message) {
    super(message)
    this.name = 'HttpError'
    this.status = status
    this.code = code
  }
}

const SECURITY_HEADERS = Object.freeze({
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
})

function send(res, status, contentType, body, extraHeaders = {}) {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    ...extraHeaders,
  })
  res.end(body)
}

/** `value` as JSON; every string in it goes through `scrubValue` first. */
function sendJson(res, status, value, scrubValue) {
  const body = JSON.stringify(value, (key, v) => (typeof v === 'string' ? scrubValue(v) : v))
  send(res, status, 'application/json; charset=utf-8', body, { 'Cache-Control': 'no-store' })
}

function sendError(res, { status, code, message }, scrubValue, extraHeaders = {}) {
  const body = JSON.stringify({ error: { code, message: scrubValue(message) } })
  send(res, status, 'application/json; charset=utf-8', body, { 'Cache-Control': 'no-store', ...extraHeaders })
}

module.exports = { HttpError, send, sendJson, sendError }
