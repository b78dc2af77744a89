// The option tables (lib/option-tables.js) are the one source of every options object's names,
// types, ranges and defaults. Each option must stand in its docs/node-api.md table with the
// range and default the table gives, and in its lib/index.d.ts interface with the type the
// table implies, its range and default in the comment; nothing may be documented or typed
// that the table lacks, and no table may go undocumented.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const tables = require('../lib/option-tables.js')
const { checkField } = require('../lib/options.js')
const { MAX_DATABASE_URL_BYTES } = require('../lib/database-url.js')

const DOCS = readFileSync(new URL('../docs/node-api.md', import.meta.url), 'utf8').split('\n')
const TYPINGS = readFileSync(new URL('../lib/index.d.ts', import.meta.url), 'utf8')
const DOCS_TABLE_HEADER = '| option | range | default | meaning |'

/** The docs/node-api.md heading each table's docs table stands under. */
const DOCS_HEADINGS = {
  RuntimeOptions: '## Runtime options',
  PostgresConnectOptions: '### PostgreSQL provider options',
  PostgresEntraOptions: '### Entra ID options',
  ListDeadLettersOptions: '#### `listDeadLetters` options',
  PurgeDeadLettersOptions: '#### `purgeDeadLetters` options',
  ListInstancesOptions: '#### `listInstances` options',
  InstanceFilter: '#### Bulk `filter`',
  PruneOptions: '#### Prune `options`',
  WaitOptions: '#### Wait `options`',
  OrchestrationWaitOptions: '#### Orchestration wait `options`',
  TracingOptions: '### `initTracing(options)` and limits',
  ActivityOptions: '#### Activity `options`',
  SubOrchestrationOptions: '#### Sub-orchestration `options`',
  RetryPolicy: '#### `retry`',
  MetricsServerOptions: '### `serveMetrics` options',
  StartOptions: '#### Start `options`',
}

const code = (text) => `\`${text}\``
const quoted = (value) => code(`'${value}'`)

/** The docs' range cell of a rule. */
function rangeText(rule) {
  switch (rule.kind) {
    case 'int': {
      const low = rule.offOrAtLeast === undefined ? rule.min : `0 or ${rule.offOrAtLeast}`
      return `${low}–${rule.max}${rule.atMost ? `, ≤ ${code(rule.atMost)}` : ''}`
    }
    case 'number':
      return `number ${rule.min}–${rule.max}`
    case 'string':
      return `string, 1–${rule.maxBytes} bytes`
    case 'enum':
      return rule.values.map(quoted).join(', ')
    case 'boolean':
      return 'boolean'
    case 'semver':
      return 'semantic version'
    case 'url':
      return `${code('postgres://')} or ${code('postgresql://')} URL, 1–${MAX_DATABASE_URL_BYTES} bytes`
    case 'schema':
      return `1–63 of ${code('[A-Za-z0-9_]')}, not starting with a digit or ${code('pg_')}`
    case 'tagFilter':
      return `${tables.TAG_FILTER_MODES.map(quoted).join(', ')}, ${code('{ tags: [...] }')}, ${code('{ defaultAnd: [...] }')} (≤ ${tables.MAX_WORKER_TAGS} tags of 1–${tables.MAX_TAG_NAME_BYTES} bytes)`
    case 'instanceIds':
      return `≤ ${rule.max} instance ids`
    case 'abortSignal':
      return code('AbortSignal')
    case 'orchestrationRef':
      return `a ${code('defineOrchestration')} reference`
    case 'backoff':
      return `${Object.keys(tables.BACKOFFS).map(quoted).join(', ')} or ${code('{ kind, … }')}`
    case 'logger':
      return `object with ${['debug', 'info', 'warn', 'error'].map(code).join(', ')} methods`
    case 'tokenSource':
      return 'a function'
    default:
      throw new Error(`no range text for kind ${rule.kind}`)
  }
}

/** The docs' default cell of a rule. */
function defaultText(rule) {
  if (rule.required) return 'required'
  if (rule.defaultText !== undefined) return rule.defaultText
  return typeof rule.default === 'string' ? quoted(rule.default) : String(rule.default)
}

/** The TypeScript type of a rule, as lib/index.d.ts writes it. */
function typeText(rule) {
  switch (rule.kind) {
    case 'int':
    case 'number':
      return 'number'
    case 'string':
    case 'semver':
    case 'url':
    case 'schema':
      return 'string'
    case 'enum':
      return rule.values.map((v) => `'${v}'`).join(' | ')
    case 'boolean':
      return 'boolean'
    case 'tagFilter':
      return 'TagFilter'
    case 'instanceIds':
      return 'string[]'
    case 'abortSignal':
      return 'AbortSignal'
    case 'orchestrationRef':
      return 'OrchestrationRef'
    case 'backoff':
      return 'Backoff'
    case 'logger':
      return 'Logger'
    case 'tokenSource':
      return 'TokenSource'
    default:
      throw new Error(`no type for kind ${rule.kind}`)
  }
}

/** What the d.ts comment of a rule must mention: its bounds and its default value. */
function commentFacts(rule) {
  const facts = []
  if (rule.kind === 'int' || rule.kind === 'number') facts.push(`${rule.offOrAtLeast ?? rule.min}–${rule.max}`)
  if (rule.kind === 'string') facts.push(`1–${rule.maxBytes} bytes`)
  if (rule.default !== undefined) {
    const value = typeof rule.default === 'string' ? `["']${rule.default}["']` : String(rule.default).replace('.', '\\.')
    facts.push(new RegExp(`Default:? \`?${value}\`?(?!\\w|\\.\\d)`))
  }
  return facts
}

/** The cells of a markdown table row; a `|` inside backticks belongs to its cell. */
function cellsOf(line) {
  const cells = []
  let cell = ''
  let inCode = false
  for (const ch of line.trim().slice(1, -1)) {
    if (ch === '`') inCode = !inCode
    if (ch === '|' && !inCode) {
      cells.push(cell.trim())
      cell = ''
    } else {
      cell += ch
    }
  }
  return [...cells, cell.trim()]
}

/** Line numbers of every option table in the docs. */
function docsTableStarts() {
  return DOCS.flatMap((line, i) => (line === DOCS_TABLE_HEADER ? [i] : []))
}

/** The option table under `heading` (before the next heading): option name → { range, default }. */
function docsTable(heading) {
  const at = DOCS.indexOf(heading)
  assert.notEqual(at, -1, `docs/node-api.md has no heading ${JSON.stringify(heading)}`)
  let i = at + 1
  while (i < DOCS.length && DOCS[i] !== DOCS_TABLE_HEADER) {
    assert.ok(!DOCS[i].startsWith('#'), `docs/node-api.md: no "${DOCS_TABLE_HEADER}" table under ${heading}`)
    i++
  }
  assert.ok(i < DOCS.length, `docs/node-api.md: no option table under ${heading}`)
  const rows = new Map()
  for (i += 2; i < DOCS.length && DOCS[i].startsWith('|'); i++) {
    const [option, range, defaultCell] = cellsOf(DOCS[i])
    const name = /^`(\w+)`$/.exec(option)?.[1]
    assert.ok(name, `docs/node-api.md line ${i + 1}: the option cell must be one \`name\`: ${DOCS[i]}`)
    assert.ok(!rows.has(name), `docs/node-api.md: ${name} twice under ${heading}`)
    rows.set(name, { range, default: defaultCell })
  }
  return rows
}

/** The members of `export interface name`: name → { optional, type, comment }. */
function typedMembers(name) {
  const body = new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)^\\}`, 'm').exec(TYPINGS)?.[1]
  assert.ok(body !== undefined, `lib/index.d.ts has no interface ${name}`)
  const members = new Map()
  for (const m of body.matchAll(/(?:\/\*\*([\s\S]*?)\*\/\s*)?^[ \t]*(\w+)(\??): (.+)$/gm)) {
    const comment = (m[1] ?? '').replace(/^\s*\*\s?/gm, '').replace(/\s+/g, ' ').trim()
    members.set(m[2], { optional: m[3] === '?', type: m[4].trim(), comment })
  }
  return members
}

test('every options table has a typed interface and a docs heading, and every *Options interface a table', () => {
  const fieldTables = Object.entries(tables).filter(([name]) => name.endsWith('_FIELDS'))
  for (const [name, table] of fieldTables) {
    assert.ok(Object.values(tables.OPTION_TABLES).includes(table), `${name} is missing from OPTION_TABLES`)
  }
  assert.deepEqual(Object.keys(DOCS_HEADINGS).sort(), Object.keys(tables.OPTION_TABLES).sort())
  const typedOptions = [...TYPINGS.matchAll(/^export interface (\w+Options) /gm)].map((m) => m[1])
  for (const name of typedOptions) assert.ok(name in tables.OPTION_TABLES, `lib/index.d.ts ${name} has no options table`)
})

test('every option table in the docs stands under the heading of a table', () => {
  const headingsAt = Object.values(DOCS_HEADINGS).map((h) => DOCS.indexOf(h))
  for (const start of docsTableStarts()) {
    const heading = DOCS.slice(0, start).findLast((line) => line.startsWith('#'))
    assert.ok(headingsAt.includes(DOCS.indexOf(heading)), `docs/node-api.md line ${start + 1}: an option table under ${heading}, which no options table describes`)
  }
})

for (const [iface, table] of Object.entries(tables.OPTION_TABLES)) {
  test(`${iface}: each rule is complete and its default passes it`, () => {
    for (const [option, rule] of Object.entries(table)) {
      const given = ['default', 'defaultText', 'required'].filter((k) => rule[k] !== undefined)
      assert.equal(given.length, 1, `${iface}.${option} needs exactly one of default, defaultText, required (has ${given.join(', ') || 'none'})`)
      rangeText(rule)
      if (rule.default !== undefined) checkField(`${iface}.${option}`, rule, rule.default)
    }
  })

  test(`${iface}: docs/node-api.md documents exactly these options, with their ranges and defaults`, () => {
    const rows = docsTable(DOCS_HEADINGS[iface])
    for (const [option, rule] of Object.entries(table)) {
      const row = rows.get(option)
      assert.ok(row, `${option} is not in the docs table under ${DOCS_HEADINGS[iface]}`)
      assert.equal(row.range, rangeText(rule), `range of ${option}`)
      assert.equal(row.default, defaultText(rule), `default of ${option}`)
    }
    for (const option of rows.keys()) assert.ok(option in table, `${option} is documented under ${DOCS_HEADINGS[iface]} but not in the table`)
  })

  test(`${iface}: lib/index.d.ts types exactly these options`, () => {
    const members = typedMembers(iface)
    for (const [option, rule] of Object.entries(table)) {
      const member = members.get(option)
      assert.ok(member, `${option} is not a member of interface ${iface}`)
      assert.equal(member.type, typeText(rule), `type of ${iface}.${option}`)
      assert.equal(member.optional, !rule.required, `${iface}.${option} must be ${rule.required ? 'required' : 'optional'}`)
      for (const fact of commentFacts(rule)) {
        const found = typeof fact === 'string' ? member.comment.includes(fact) : fact.test(member.comment)
        assert.ok(found, `the comment of ${iface}.${option} must state ${fact}: ${JSON.stringify(member.comment)}`)
      }
    }
    for (const option of members.keys()) assert.ok(option in table, `${iface}.${option} is typed but not in the table`)
  })
}
