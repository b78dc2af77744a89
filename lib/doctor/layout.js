'use strict'

// Recognise which provider owns a schema and check that doctor's statements fit it. What
// doctor knows of steadfast's tables is what its named queries read: a schema is steadfast's
// when it has every table they name, and it fits when every one of them plans against it.

const { COMMON_QUERIES, STEADFAST_TEMPLATES, renderSql, tablesOf, parameterCount } = require('./queries')
const { SIGNATURE: DUROXIDE_SIGNATURE, duroxideTemplates, duroxideLayoutProblem } = require('./duroxide-pg')

const UNDEFINED_COLUMN = '42703'
const UNDEFINED_TABLE = '42P01'

/** The tables whose presence names the provider. */
const SIGNATURE = Object.freeze({
  steadfast: Object.freeze([...new Set(Object.values(STEADFAST_TEMPLATES).flatMap((t) => [...tablesOf(t)]))].sort()),
  'duroxide-pg': DUROXIDE_SIGNATURE,
})

class LayoutError extends Error {
  constructor(message) {
    super(message)
    this.name = 'LayoutError'
  }
}

/** The schema from pg_catalog: { oid, tables: Map(table -> Map(column -> type)) }, or null. */
async function readCatalog(client, schema) {
  const r = await client.query(COMMON_QUERIES.schema_tables, [schema])
  if (r.rowCount === 0) return null
  const tables = new Map(Object.entries(r.rows[0].tables).map(([t, cols]) => [t, new Map(Object.entries(cols))]))
  return { oid: r.rows[0].oid, tables }
}

/**
 * The tables of `template` that lack the column a 42703 error names: `column l.x does not
 * exist` names the table by its alias (`__SCHEMA__.table AS l`), `column "x" does not exist`
 * any table the statement reads.
 */
function tablesLackingColumn(template, message, tables) {
  const m = /column "?(?:(\w+)\.)?(\w+)"? does not exist/.exec(message)
  if (!m) return []
  const [, alias, column] = m
  const aliased = [...template.matchAll(/__SCHEMA__\.(\w+)\s+AS\s+(\w+)/g)].filter((a) => a[2] === alias).map((a) => a[1])
  const candidates = aliased.length ? aliased : [...tablesOf(template)]
  return candidates.filter((t) => tables.has(t) && !tables.get(t).has(column)).map((t) => `${t}.${column}`)
}

/**
 * Plan (EXPLAIN, without running) every template against the schema; throws LayoutError
 * naming what a statement reads and the schema lacks.
 */
async function checkTemplatesFit(client, schema, kind, templates, tables) {
  const lacks = new Set()
  for (const template of Object.values(templates)) {
    const sql = renderSql(template, schema)
    try {
      await client.query(`EXPLAIN ${sql}`, new Array(parameterCount(sql)).fill(null))
    } catch (e) {
      if (e.code === UNDEFINED_TABLE) {
        for (const t of tablesOf(template)) if (!tables.has(t)) lacks.add(t)
      } else if (e.code === UNDEFINED_COLUMN) {
        const missing = tablesLackingColumn(template, e.message, tables)
        if (missing.length) for (const c of missing) lacks.add(c)
        else lacks.add(`what it reads (${e.message})`)
      } else {
        throw e
      }
    }
  }
  if (lacks.size) {
    throw new LayoutError(
      `schema "${schema}" looks like a ${kind} schema but lacks ${[...lacks].join(', ')} ` +
        `(an unsupported or partly migrated version)`,
    )
  }
}

/**
 * Identify the schema: `{ kind, oid, tables, queries }`, `queries` being doctor's statements
 * for it, rendered, by name. Throws LayoutError when the schema does not exist, matches
 * neither provider, or lacks what doctor reads.
 */
async function detectLayout(client, schema, database) {
  const cat = await readCatalog(client, schema)
  if (!cat) throw new LayoutError(`schema "${schema}" does not exist in database "${database}" (pass --schema)`)
  const { tables } = cat
  const has = (names) => names.every((t) => tables.has(t))
  let kind
  if (has(SIGNATURE.steadfast)) kind = 'steadfast'
  else if (has(SIGNATURE['duroxide-pg'])) kind = 'duroxide-pg'
  if (!kind) {
    const found = [...tables.keys()].sort()
    throw new LayoutError(
      `schema "${schema}" is not a steadfast schema (needs tables ${SIGNATURE.steadfast.join(', ')}) ` +
        `nor a duroxide-pg schema (needs ${SIGNATURE['duroxide-pg'].join(', ')}); ` +
        `it has ${found.length ? found.slice(0, 12).join(', ') + (found.length > 12 ? ', …' : '') : 'no tables'}`,
    )
  }
  const templates = kind === 'steadfast' ? STEADFAST_TEMPLATES : duroxideTemplates(tables)
  await checkTemplatesFit(client, schema, kind, templates, tables)
  if (kind === 'duroxide-pg') {
    const problem = duroxideLayoutProblem(tables)
    if (problem) throw new LayoutError(`schema "${schema}": ${problem}`)
  }
  const queries = Object.fromEntries(Object.entries(templates).map(([name, t]) => [name, renderSql(t, schema)]))
  return { kind, oid: cat.oid, tables, queries }
}

module.exports = { detectLayout, LayoutError, SIGNATURE }
