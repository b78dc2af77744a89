// Another platform's published packages, installed as a user there gets them and run by
// that platform's Node: the root tarball and the platform tarball of
// STEADFAST_EMULATED_PLATFORM (e.g. linux-arm64-gnu, linux-x64-musl) from target/npm-pack/,
// installed as npm does for that platform, and the README's quickstarts (SQLite) run by
// STEADFAST_EMULATED_NODE, a command line (e.g. qemu-aarch64 and an arm64 node binary, or
// musl's dynamic loader and a musl node binary). Run by scripts/emulated-install-test.sh,
// which sets all of that up.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { QUICKSTART_OUTPUT, readmeQuickstarts } from '../readme-quickstarts.mjs'
import { assertBinaryFromPlatformPackage, installPacked } from '../packed/installed-project.mjs'

const PLATFORM = process.env.STEADFAST_EMULATED_PLATFORM
const NODE = (process.env.STEADFAST_EMULATED_NODE ?? '').split(' ').filter(Boolean)
const [, cpu, abi] = PLATFORM?.split('-') ?? []
let project, env, remove

before(() => {
  assert.ok(PLATFORM && NODE.length, 'STEADFAST_EMULATED_PLATFORM and STEADFAST_EMULATED_NODE are set')
  ;({ dir: project, env, remove } = installPacked(PLATFORM))
})

after(() => remove?.())

test('the binary comes from the platform package', () => {
  assertBinaryFromPlatformPackage(project, PLATFORM)
})

test(`the emulated Node runs as ${PLATFORM}`, () => {
  const r = spawnSync(NODE[0], [...NODE.slice(1), '-p', '`${process.platform}-${process.arch}`'], { env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout.trim(), `linux-${cpu}`)
})

test(`that Node's C library is ${abi}`, () => {
  const libc = 'process.report.getReport().header.glibcVersionRuntime ?? "musl"'
  const r = spawnSync(NODE[0], [...NODE.slice(1), '-p', libc], { env, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  if (abi === 'musl') assert.equal(r.stdout.trim(), 'musl')
  else assert.match(r.stdout.trim(), /^\d+\.\d+/, 'a glibc version')
})

for (const [kind, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  test(`the README's ${kind} quickstart runs on ${PLATFORM}`, { timeout: 300_000 }, () => {
    const file = join(project, `quickstart.${ext}`)
    writeFileSync(file, readmeQuickstarts()[kind])
    const r = spawnSync(NODE[0], [...NODE.slice(1), file], { cwd: project, env, encoding: 'utf8' })
    assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`)
    for (const line of QUICKSTART_OUTPUT) assert.match(r.stdout, line)
  })
}
