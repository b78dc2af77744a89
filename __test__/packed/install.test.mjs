// The published packages as a user gets them: the root and linux-x64-gnu tarballs that
// ./scripts/package.sh wrote to target/npm-pack/, installed into a fresh project with no
// Rust toolchain on PATH. The README's quickstarts (ES module and CommonJS, SQLite) run as
// written, a typed usage file passes tsc under moduleResolution nodenext against the
// installed typings, the doctor CLI answers --help, and its named queries are installed.
// Run by scripts/packed-install-test.sh.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { QUICKSTART_OUTPUT, ROOT, readmeQuickstarts } from '../readme-quickstarts.mjs'
import { assertBinaryFromPlatformPackage, installPacked } from './installed-project.mjs'

const PLATFORM = 'linux-x64-gnu'
let project, env, run, remove

before(() => {
  ;({ dir: project, env, run, remove } = installPacked(PLATFORM))
})

after(() => remove?.())

test('the binary comes from the platform package, not from a build', () => {
  assertBinaryFromPlatformPackage(project, PLATFORM)
})

for (const [kind, ext] of [['esm', 'mjs'], ['cjs', 'cjs']]) {
  test(`the README's ${kind} quickstart runs against the installed package`, { timeout: 60_000 }, () => {
    const file = join(project, `quickstart.${ext}`)
    writeFileSync(file, readmeQuickstarts()[kind])
    const out = run(process.execPath, [file])
    for (const line of QUICKSTART_OUTPUT) assert.match(out, line)
  })
}

test('a typed usage file passes tsc under moduleResolution nodenext', { timeout: 60_000 }, () => {
  copyFileSync(join(ROOT, '__test__', 'esm', 'types-check.mts'), join(project, 'usage.mts'))
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        skipLibCheck: false,
      },
      files: ['usage.mts'],
    }),
  )
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'])
})

test("the installed package holds doctor's named queries where lib/doctor reads them", () => {
  const dir = join('crates', 'steadfast-pg', 'queries')
  const doctorQueries = (root) => readdirSync(join(root, dir)).filter((f) => /^doctor_\w+\.sql$/.test(f)).sort()
  assert.deepEqual(doctorQueries(join(project, 'node_modules', 'steadfast')), doctorQueries(ROOT))
})

test('the doctor CLI answers --help, and names its one extra package when it is missing', () => {
  const cli = join(project, 'node_modules', '.bin', 'steadfast')
  assert.match(run(cli, ['--help']), /doctor/)
  assert.ok(!readdirSync(join(project, 'node_modules')).includes('pg'), 'pg is not installed with steadfast')
  const r = spawnSync(cli, ['doctor', '--url', 'postgres://nobody@127.0.0.1:1/none'], { cwd: project, env, encoding: 'utf8' })
  assert.equal(r.status, 2, r.stderr)
  assert.match(r.stderr, /needs the PostgreSQL client package 'pg': npm install pg/)
})
