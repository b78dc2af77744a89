// The README's Node quickstarts run exactly as written (the first two ```js blocks of its
// "Node.js binding" section: an ES module, then CommonJS), importing the package by its name
// through package.json "exports". The ES module and CommonJS entries export the same names.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

function quickstarts() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Node.js binding'))
  const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  assert.ok(blocks.length >= 2, 'two quickstart blocks')
  return { esm: blocks[0], cjs: blocks[1] }
}

for (const [kind, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  test(`the README's ${kind} quickstart runs as written`, { timeout: 60_000 }, () => {
    // Inside the package directory, so that 'steadfast' resolves to this package by its name.
    const dir = join(ROOT, 'target', `readme-${kind}-${process.pid}`)
    mkdirSync(dir, { recursive: true })
    try {
      const file = join(dir, `quickstart.${ext}`)
      writeFileSync(file, quickstarts()[kind])
      const out = execFileSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, RUST_LOG: 'error' } })
      assert.match(out, /status: 'Completed'/)
      assert.match(out, /output: 'hello Ada'/)
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
