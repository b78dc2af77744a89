// docs/parity.md lists duroxide-node's API with its status in steadfast. Everything it calls
// "same" or "differs" must exist here: an export of the kind named, a static, a prototype
// method, a field of a constructed context, or a typed option; so the list cannot go stale.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { steadfast } from './helpers.mjs'

const PARITY = readFileSync(new URL('../docs/parity.md', import.meta.url), 'utf8')
const TYPINGS = readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8')
const HEADER = '| duroxide-node | kind | steadfast | why, and how to get upstream\'s behaviour |'
const STATUSES = new Set(['same', 'differs', 'missing'])
const KINDS = new Set(['class', 'function', 'constant', 'type', 'static', 'method', 'field', 'option', 'native'])

/** Every row of every parity table: { name, owner?, member?, kind, status, why, line }. */
function rows() {
  const lines = PARITY.split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== HEADER) continue
    for (i += 2; i < lines.length && lines[i].startsWith('|'); i++) {
      const [nameCell, kind, status, why] = lines[i].slice(1, -1).split(/(?<!\\) \| /).map((c) => c.trim())
      const name = /^`([\w.]+)`$/.exec(nameCell)?.[1]
      assert.ok(name, `docs/parity.md line ${i + 1}: the first cell must be one \`name\``)
      const [owner, member] = name.includes('.') ? name.split('.') : [undefined, undefined]
      out.push({ name, owner, member, kind, status, why, line: i + 1 })
    }
  }
  return out
}

/** Contexts built as the runtime builds them (the native handle is never touched here). */
const CONTEXTS = {
  OrchestrationContext: new steadfast.OrchestrationContext(null, 1, { instanceId: 'i', executionId: 1, name: 'O', version: '1.0.0' }),
  ActivityContext: new steadfast.ActivityContext(null, { id: 1, instanceId: 'i', executionId: 1, activityName: 'A', workerId: 'w' }, new AbortController().signal),
}

/** The members of `export interface name` in lib/index.d.ts. */
function interfaceMembers(name) {
  const body = new RegExp(`^export interface ${name}\\b[^{]*\\{\\n([\\s\\S]*?)^\\}`, 'm').exec(TYPINGS)?.[1] ?? ''
  return new Set([...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]))
}

/** Why `row` does not exist in steadfast, or null when it does. */
function absence({ name, owner, member, kind }) {
  switch (kind) {
    case 'class':
    case 'function':
      return typeof steadfast[name] === 'function' ? null : `steadfast exports no ${kind} ${name}`
    case 'constant':
      return typeof steadfast[name] === 'number' ? null : `steadfast exports no constant ${name}`
    case 'type':
      return new RegExp(`^export (interface|type|class) ${name}\\b`, 'm').test(TYPINGS) ? null : `lib/index.d.ts exports no type ${name}`
    case 'static':
      return typeof steadfast[owner]?.[member] === 'function' ? null : `${owner} has no static ${member}`
    case 'method':
      return typeof steadfast[owner]?.prototype?.[member] === 'function' ? null : `${owner}.prototype has no method ${member}`
    case 'field':
      return CONTEXTS[owner] && member in CONTEXTS[owner] ? null : `a constructed ${owner} has no field ${member}`
    case 'option':
      return interfaceMembers(owner).has(member) ? null : `lib/index.d.ts interface ${owner} has no option ${member}`
    default:
      return `the native layer is not public: a ${kind} row can only be missing`
  }
}

test('every row has a kind and a status, and a difference says why', () => {
  const all = rows()
  assert.ok(all.length > 150, `only ${all.length} rows`)
  for (const row of all) {
    assert.ok(KINDS.has(row.kind), `line ${row.line}: unknown kind ${row.kind}`)
    assert.ok(STATUSES.has(row.status), `line ${row.line}: status must be same, differs or missing (got ${row.status})`)
    if (row.status !== 'same') assert.ok(row.why.length > 0, `line ${row.line}: ${row.name} ${row.status} without saying why`)
  }
  const names = all.map((r) => `${r.kind} ${r.name}`)
  assert.equal(new Set(names).size, names.length, 'a row is listed twice')
})

test('everything listed as same or differs exists in steadfast', () => {
  const problems = rows()
    .filter((row) => row.status !== 'missing')
    .map((row) => absence(row) && `line ${row.line}: ${row.name} is listed as ${row.status}, but ${absence(row)}`)
    .filter(Boolean)
  assert.deepEqual(problems, [])
})

test('everything listed as missing is missing', () => {
  const present = rows()
    .filter((row) => row.status === 'missing' && row.kind !== 'native' && absence(row) === null)
    .map((row) => `line ${row.line}: ${row.name} is listed as missing, but steadfast has it`)
  assert.deepEqual(present, [])
})
