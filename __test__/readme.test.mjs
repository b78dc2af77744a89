// The README's Node quickstarts run exactly as written (the first two ```js blocks of its
// "Quick start" section: an ES module, then CommonJS), importing the package by its name
// through package.json "exports". The ES module and CommonJS entries export the same names.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { QUICKSTART_OUTPUT, ROOT, readmeQuickstarts } from './readme-quickstarts.mjs'

for (const [kind, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  test(`the README's ${kind} quickstart runs as written`, { timeout: 60_000 }, () => {
    // Inside the package directory, so that 'steadfast' resolves to this package by its name.
    const dir = join(ROOT, 'target', `readme-${kind}-${process.pid}`)
    mkdirSync(dir, { recursive: true })
    try {
      const file = join(dir, `quickstart.${ext}`)
      writeFileSync(file, readmeQuickstarts()[kind])
      const out = execFileSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, RUST_LOG: 'error' } })
      for (const line of QUICKSTART_OUTPUT) assert.match(out, line)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('the ES module entry exports what the CommonJS entry does', async () => {
  const esm = await import('steadfast')
  const cjs = createRequire(import.meta.url)('steadfast')
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), Object.keys(cjs).sort())
  assert.equal(esm.default, cjs)
  for (const key of Object.keys(cjs)) assert.equal(esm[key], cjs[key], key)
})
