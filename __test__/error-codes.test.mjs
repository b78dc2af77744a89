// The SteadfastErrorCode union in lib/index.d.ts is exactly the codes a SteadfastError can
// carry: those the native layer gives (src/errors.rs) and those the JS layer makes itself.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'

const read = (path) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')
const codes = (text, pattern) => new Set([...text.matchAll(pattern)].map((m) => m[1]))

test('the typed union lists every code the native and JS layers raise, and only those', () => {
  const native = codes(read('src/errors.rs'), /=> "(ERR_STEADFAST_[A-Z_]+)"/g)
  assert.ok(native.size >= 10, `only ${native.size} native codes found`)
  const js = new Set()
  for (const file of readdirSync(new URL('../lib/', import.meta.url)).filter((f) => f.endsWith('.js'))) {
    for (const code of codes(read(`lib/${file}`), /new SteadfastError\('(ERR_STEADFAST_[A-Z_]+)'/g)) js.add(code)
  }
  const union = /export type SteadfastErrorCode =([\s\S]*?)\n\n/.exec(read('lib/index.d.ts'))?.[1]
  assert.ok(union, 'lib/index.d.ts has no SteadfastErrorCode union')
  const typed = codes(union, /'(ERR_STEADFAST_[A-Z_]+)'/g)
  assert.deepEqual([...typed].sort(), [...new Set([...native, ...js])].sort())
})
