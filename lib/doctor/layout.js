'use strict'

// Recognise which provider owns a schema, from its tables and columns (pg_catalog only).

/** Tables and the columns doctor's queries read, per provider. */
const LAYOUTS = Object.freeze({
  steadfast: {
    instance_leases: ['instance_id', 'lock_token', 'locked_until', 'locked_at', 'attempt_count'],
    orchestrator_queue: ['id', 'instance_id', 'visible_at', 'lock_token', 'attempt_count', 'created_at'],
    worker_queue: ['id', 'visible_at', 'lock_token', 'locked_until', 'attempt_count', 'instance_id', 'activity_id'],
    dead_letters: ['id', 'queue', 'instance_id', 'attempt_count', 'max_attempts', 'reason', 'dead_at'],
    schema_migrations: ['version'],
  },
  // duroxide-pg (0.1.x, migrations 0001-0026): lock expiry columns are BIGINT epoch milliseconds.
  'duroxide-pg': {
    orchestrator_queue: ['id', 'instance_id', 'visible_at', 'lock_token', 'locked_until', 'attempt_count'],
    worker_queue: ['id', 'visible_at', 'lock_token', 'locked_until', 'attempt_count'],
    instance_locks: ['instance_id', 'lock_token', 'locked_until', 'locked_at'],
  },
})

/** The tables whose presence names the provider. */
const SIGNATURE = Object.freeze({
  steadfast: ['instance_leases', 'orchestrator_queue', 'dead_letters', 'schema_migrations'],
  'duroxide-pg': ['orchestrator_queue', 'instance_locks'],
})

class LayoutError extends Error {
  constructor(message) {
    super(message)
    this.name = 'LayoutError'
  }
}

async function readCatalog(client, schema) {
  const ns = await client.query('SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = $1', [schema])
  if (ns.rowCount === 0) return null
  const cols = await client.query(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
     FROM pg_catalog.pg_class AS c
     JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.relnamespace = $1 AND c.relkind IN ('r', 'p')`,
    [ns.rows[0].oid],
  )
  const tables = new Map()
  for (const r of cols.rows) {
    if (!tables.has(r.table)) tables.set(r.table, new Map())
    tables.get(r.table).set(r.column, r.type)
  }
  return { oid: ns.rows[0].oid, tables }
}

function missingColumns(tables, layout) {
  const missing = []
  for (const [table, columns] of Object.entries(layout)) {
    const have = tables.get(table)
    if (!have) {
      missing.push(table)
      continue
    }
    for (const c of columns) if (!have.has(c)) missing.push(`${table}.${c}`)
  }
  return missing
}

/**
 * Identify the schema: `{ kind, oid, tables, schemaVersion }`. Throws LayoutError when the
 * schema does not exist or matches neither provider.
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
  const missing = missingColumns(tables, LAYOUTS[kind])
  if (missing.length) {
    throw new LayoutError(
      `schema "${schema}" looks like a ${kind} schema but lacks ${missing.join(', ')} ` +
        `(an unsupported or partly migrated version)`,
    )
  }
  if (kind === 'duroxide-pg') {
    const t = tables.get('instance_locks').get('locked_until')
    if (t !== 'bigint') {
      throw new LayoutError(`schema "${schema}": instance_locks.locked_until is ${t}, expected bigint (epoch ms)`)
    }
  }
  return { kind, oid: cat.oid, tables }
}

module.exports = { detectLayout, LayoutError, LAYOUTS, SIGNATURE }
