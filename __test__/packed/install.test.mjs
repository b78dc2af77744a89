// The published packages as a user gets them: the root and linux-x64-gnu tarballs that
// ./scripts/package.sh wrote to target/npm-pack/, installed into a fresh project with no
// Rust toolchain on PATH. The README's quickstarts (ES module and CommonJS, SQLite) run as
// written, a typed usage file passes tsc under moduleResolution nodenext against the
// installed typings, and the doctor CLI answers --help. Run by scripts/packed-install-test.sh.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { accessSync, constants, copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { QUICKSTART_OUTPUT, ROOT, readmeQuickstarts } from '../readme-quickstarts.mjs'

const PACK = join(ROOT, 'target', 'npm-pack')
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const TARBALLS = [`steadfast-${version}.tgz`, `steadfast-linux-x64-gnu-${version}.tgz`]

/** PATH without any directory that holds cargo or rustc. */
function pathWithoutRust() {
  const has = (dir, name) => {
    try {
      accessSync(join(dir, name), constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  return process.env.PATH.split(delimiter)
    .filter((dir) => dir && !has(dir, 'cargo') && !has(dir, 'rustc'))
    .join(delimiter)
}

let project
const env = { ...process.env, PATH: pathWithoutRust(), RUST_LOG: 'error', npm_config_audit: 'false', npm_config_fund: 'false' }
delete env.NODE_PATH

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: project, env, encoding: 'utf8', ...opts })
  assert.equal(r.error, undefined, `${cmd}: ${r.error?.message}`)
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

before(() => {
  const packed = readdirSync(PACK)
  for (const t of TARBALLS) assert.ok(packed.includes(t), `${t} in ${PACK} (run ./scripts/package.sh first); found ${packed}`)
  project = mkdtempSync(join(tmpdir(), 'steadfast-install-'))
  assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'no cargo on the test PATH')
  assert.equal(spawnSync('rustc', ['--version'], { env }).error?.code, 'ENOENT', 'no rustc on the test PATH')
  run('npm', ['init', '-y'])
  run('npm', ['install', ...TARBALLS.map((t) => join(PACK, t))])
})

after(() => {
  if (project) rmSync(project, { recursive: true, force: true })
})

test('the binary comes from the platform package, not from a build', () => {
  const installed = readdirSync(join(project, 'node_modules', 'steadfast'))
  assert.ok(!installed.some((f) => f.endsWith('.node')), `no .node file in the root package: ${installed}`)
  const platform = readdirSync(join(project, 'node_modules', 'steadfast-linux-x64-gnu'))
  assert.ok(platform.includes('steadfast.linux-x64-gnu.node'), `the platform package holds the binary: ${platform}`)
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

test('the doctor CLI answers --help, and names its one extra package when it is missing', () => {
  const cli = join(project, 'node_modules', '.bin', 'steadfast')
  assert.match(run(cli, ['--help']), /doctor/)
  assert.ok(!readdirSync(join(project, 'node_modules')).includes('pg'), 'pg is not installed with steadfast')
  const r = spawnSync(cli, ['doctor', '--url', 'postgres://nobody@127.0.0.1:1/none'], { cwd: project, env, encoding: 'utf8' })
  assert.equal(r.status, 2, r.stderr)
  assert.match(r.stderr, /needs the PostgreSQL client package 'pg': npm install pg/)
})
