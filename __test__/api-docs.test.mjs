// docs/node-api.md's Providers and Runtime-method sections name every public member of the
// provider classes and of Runtime, and nothing they lack, so the reference cannot fall behind
// the code.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { steadfast } from './helpers.mjs'

const DOCS = readFileSync(new URL('../docs/node-api.md', import.meta.url), 'utf8')

/** The text from `heading` to the next heading of the same or a higher level. */
function section(heading) {
  const start = DOCS.indexOf(`\n${heading}\n`)
  assert.notEqual(start, -1, `docs/node-api.md has no heading ${heading}`)
  const level = heading.split(' ')[0]
  const next = DOCS.slice(start + heading.length + 2).search(new RegExp(`^#{1,${level.length}} `, 'm'))
  return next === -1 ? DOCS.slice(start) : DOCS.slice(start, start + heading.length + 2 + next)
}

/** Member names in the first column of the section's tables: `name(`, `Class.name(`, `new Class(`, `name`. */
function documentedMembers(heading) {
  const names = new Set()
  for (const line of section(heading).split('\n')) {
    if (!line.startsWith('| `')) continue
    const cell = line.slice(1, line.indexOf(' |', 1))
    for (const m of cell.matchAll(/`(?:new |\w+\.)?(\w+)[`(]/g)) names.add(m[1])
  }
  return names
}

/** Public members: own prototype methods and getters (not `constructor`, not `_internal`) and, with `statics`, static methods. */
function publicMembers(Class, { statics = false } = {}) {
  const own = (object) => Object.getOwnPropertyNames(object).filter((name) => !name.startsWith('_') && typeof Object.getOwnPropertyDescriptor(object, name).value !== 'object')
  const members = own(Class.prototype).filter((name) => name !== 'constructor')
  const inherited = Object.getPrototypeOf(Class.prototype)
  if (inherited !== Object.prototype && inherited.constructor.name === 'Provider') members.push(...own(inherited).filter((name) => name !== 'constructor'))
  if (statics) members.push(...own(Class).filter((name) => !['length', 'name', 'prototype'].includes(name)))
  return new Set(members)
}

test('the Providers section documents every provider factory and member, and only those', () => {
  assert.deepEqual(documentedMembers('### `SqliteProvider`'), publicMembers(steadfast.SqliteProvider, { statics: true }))
  assert.deepEqual(documentedMembers('### `PostgresProvider`'), publicMembers(steadfast.PostgresProvider, { statics: true }))
})

test('the Runtime methods section documents every Runtime method, and only those', () => {
  const expected = publicMembers(steadfast.Runtime)
  expected.add('Runtime')
  assert.deepEqual(documentedMembers('## Runtime methods'), expected)
})
