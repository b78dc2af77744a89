'use strict'

// Rules for strings that cross into Rust and PostgreSQL. napi converts JS strings to UTF-8
// and silently turns a lone surrogate into U+FFFD, and PostgreSQL `text` cannot hold NUL,
// so both are refused here with the index of the offending character.

const LONE_SURROGATE = /\p{Cs}/u

/** The problem with `value` as text for Rust, or null: `{ kind: 'size' | 'char', rule }`. */
function checkText(value, maxBytes) {
  const bytes = Buffer.byteLength(value)
  if (bytes > maxBytes) return { kind: 'size', rule: `must be at most ${maxBytes} bytes as UTF-8 (got ${bytes})` }
  const nul = value.indexOf('\0')
  if (nul !== -1) return { kind: 'char', rule: `must not contain NUL characters (found one at index ${nul})` }
  const lone = LONE_SURROGATE.exec(value)
  if (lone) return { kind: 'char', rule: `must be well-formed UTF-16 (lone surrogate at index ${lone.index})` }
  return null
}

/** A message safe to store whatever it holds: NUL and lone surrogates become U+FFFD. */
function sanitizeMessage(text) {
  return String(text).replace(/\0|\p{Cs}/gu, '\uFFFD')
}

module.exports = { checkText, sanitizeMessage, LONE_SURROGATE }
