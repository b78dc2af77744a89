// Loading the package where its native binary cannot load: a platform nothing is built for
// gets an error naming it and the supported platforms (the napi-rs loader's own message
// blames npm); a supported platform whose binary is missing says which package to install.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

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
  assert.match(err.message, new RegExp(`no native binary for this platform \\(sunos-${process.arch}\\); supported platforms: linux-x64-gnu$`))
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
