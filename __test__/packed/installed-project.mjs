// A fresh npm project with the packed root package installed from target/npm-pack/
// (./scripts/package.sh writes it and the platform packages), and no Rust toolchain on PATH:
// the packages as a user gets them. Shared by the packed-install and emulated-install tests.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { ROOT } from '../readme-quickstarts.mjs'

const PACK = join(ROOT, 'target', 'npm-pack')
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

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

/**
 * Install the root package into a new project for `platform` (e.g. linux-arm64-gnu), as npm
 * on that platform would: the root's optional dependency on `steadfast-<platform>` resolves
 * to the packed tarball (an `overrides` entry stands in for the registry), and npm's
 * `--cpu/--os/--libc` say which platform to install for.
 * Returns { dir, env, run(cmd, args) -> stdout (asserting exit 0), remove() }.
 */
export function installPacked(platform) {
  const [os, cpu, abi] = platform.split('-')
  const root = `steadfast-${version}.tgz`
  const native = `steadfast-${platform}-${version}.tgz`
  const packed = readdirSync(PACK)
  for (const t of [root, native]) assert.ok(packed.includes(t), `${t} in ${PACK} (run ./scripts/package.sh first); found ${packed}`)
  const env = { ...process.env, PATH: pathWithoutRust(), RUST_LOG: 'error', npm_config_audit: 'false', npm_config_fund: 'false' }
  delete env.NODE_PATH
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-install-'))
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: dir, env, encoding: 'utf8' })
    assert.equal(r.error, undefined, `${cmd}: ${r.error?.message}`)
    assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
    return r.stdout
  }
  assert.equal(spawnSync('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'no cargo on the test PATH')
  assert.equal(spawnSync('rustc', ['--version'], { env }).error?.code, 'ENOENT', 'no rustc on the test PATH')
  const manifest = { name: 'steadfast-install-check', version: '1.0.0', private: true, overrides: { [`steadfast-${platform}`]: `file:${join(PACK, native)}` } }
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2))
  const libc = os === 'linux' ? [`--libc=${abi === 'musl' ? 'musl' : 'glibc'}`] : []
  run('npm', ['install', `--os=${os}`, `--cpu=${cpu}`, ...libc, join(PACK, root)])
  return { dir, env, run, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** The installed binary lives in the platform package, and the root package holds none. */
export function assertBinaryFromPlatformPackage(dir, platform) {
  const installed = readdirSync(join(dir, 'node_modules', 'steadfast'))
  assert.ok(!installed.some((f) => f.endsWith('.node')), `no .node file in the root package: ${installed}`)
  const files = readdirSync(join(dir, 'node_modules', `steadfast-${platform}`))
  assert.ok(files.includes(`steadfast.${platform}.node`), `the platform package holds the binary: ${files}`)
}
