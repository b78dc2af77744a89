'use strict'

// doctor's statements: the provider's named queries crates/steadfast-pg/queries/doctor_*.sql
// (one statement a file, written against the __SCHEMA__ placeholder), rendered the way the
// provider renders its own. The package ships them at the same path relative to lib/doctor.

const { readdirSync, readFileSync } = require('node:fs')
const path = require('node:path')

const QUERY_DIR = path.join(__dirname, '..', '..', 'crates', 'steadfast-pg', 'queries')
const PREFIX = 'doctor_'
const PLACEHOLDER = '__SCHEMA__'

function quoteIdent(name) {
  return `"${String(name).replace(/"/g, '""')}"`
}

/** A query template with the schema in place of the placeholder, quoted as an identifier. */
function renderSql(template, schema) {
  return template.replaceAll(PLACEHOLDER, quoteIdent(schema))
}

/** The tables a template reads from the schema: every `__SCHEMA__.name` in it. */
function tablesOf(template) {
  return new Set([...template.matchAll(/__SCHEMA__\.(\w+)/g)].map((m) => m[1]))
}

/** How many parameters ($1, $2, …) a statement takes. */
function parameterCount(sql) {
  return Math.max(0, ...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))
}

function readDoctorQueries() {
  let files
  try {
    files = readdirSync(QUERY_DIR).filter((f) => f.startsWith(PREFIX) && f.endsWith('.sql'))
  } catch (e) {
    throw new Error(`steadfast doctor: cannot read its queries in ${QUERY_DIR} (${e.code || e.message}): a broken install?`)
  }
  const templates = {}
  for (const f of files.sort()) templates[f.slice(PREFIX.length, -'.sql'.length)] = readFileSync(path.join(QUERY_DIR, f), 'utf8')
  return templates
}

const ALL = Object.freeze(readDoctorQueries())
const pick = (keep) => Object.freeze(Object.fromEntries(Object.entries(ALL).filter(([, sql]) => keep(sql.includes(PLACEHOLDER)))))

/** Statements over the session and pg_catalog, the same for every layout, by name. */
const COMMON_QUERIES = pick((namesSchema) => !namesSchema)

/** Statements over a steadfast schema's tables, as templates, by name. */
const STEADFAST_TEMPLATES = pick((namesSchema) => namesSchema)

module.exports = {
  QUERY_DIR,
  PREFIX,
  COMMON_QUERIES,
  STEADFAST_TEMPLATES,
  renderSql,
  tablesOf,
  parameterCount,
  quoteIdent,
}
