// Loading the package where its native binary cannot load: a platform nothing is built for
// gets an error naming it and the supported platforms (the napi-rs loader's own message
// blames npm); a supported platform whose binary is missing says which package to install.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(import.meta.url)

/** Require `<root>/lib/index.js` in a fresh process after `prelude`; the error's code and message. */
function loadFailure(root, prelude = '') {
  const script = `${prelude}
    try { require(${JSON.stringify(join(root, 'lib/index.js'))}); console.log('{}') }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))
}

test('an unsupported platform is named, with the supported list', () => {
  const err = loadFailure(ROOT, "Object.defineProperty(process, 'platform', { value: 'sunos' })")
  assert.equal(err.code, 'ERR_STEADFAST_UNSUPPORTED_PLATFORM')
  assert.match(err.message, new RegExp(`no native binary for this platform \\(sunos-${process.arch}\\); supported platforms: linux-x64-gnu, linux-arm64-gnu, linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64, win32-x64-msvc$`))
})

test('a supported platform without its binary names the package to install', { skip: process.platform !== 'linux' || process.arch !== 'x64' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-nobinary-'))
  try {
    for (const part of ['lib', 'index.js', 'package.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true })
    const err = loadFailure(dir)
    assert.equal(err.code, 'ERR_STEADFAST_NATIVE_LOAD')
    assert.match(err.message, /binary for linux-x64-gnu could not be loaded: install the package steadfast-linux-x64-gnu/)
    assert.match(err.message, /scripts\/build-addon\.sh/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('every platform package is in step with the root package', () => {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const { platformOfTarget } = require('../lib/platforms.js')
  const dirs = readdirSync(join(ROOT, 'npm')).sort()
  assert.deepEqual(dirs, root.napi.targets.map(platformOfTarget).sort(), 'npm/<platform> for each napi.targets entry (npx napi create-npm-dirs)')
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'npm', dir, 'package.json'), 'utf8'))
    assert.equal(pkg.name, `${root.napi.binaryName}-${dir}`)
    assert.equal(pkg.version, root.version, `npm/${dir} version (npx napi version)`)
    assert.deepEqual(pkg.engines, root.engines, `npm/${dir} engines`)
    assert.equal(pkg.license, root.license, `npm/${dir} license`)
  }
})

test('docs/packaging.md lists exactly the supported platforms, with their Rust targets', () => {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const { platformOfTarget } = require('../lib/platforms.js')
  const doc = readFileSync(join(ROOT, 'docs', 'packaging.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Platforms'), doc.indexOf('\n## ', doc.indexOf('## Platforms') + 1))
  const rows = [...section.matchAll(/^\| ([a-z0-9-]+) \| ([a-z0-9_-]+) \|/gm)].map((m) => [m[1], m[2]])
  assert.deepEqual(rows, root.napi.targets.map((t) => [platformOfTarget(t), t]))
})
