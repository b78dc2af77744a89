'use strict'

// Platforms named as napi-rs names them (linux-x64-gnu, darwin-arm64, win32-x64-msvc): the
// suffix of the binary steadfast.<platform>.node and of the package steadfast-<platform>.

const ARCH = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }

/** A Rust target triple as a platform: x86_64-unknown-linux-gnu -> linux-x64-gnu. */
function platformOfTarget(triple) {
  const [cpu, ...rest] = triple.split('-')
  const arch = ARCH[cpu] ?? cpu
  const os = rest.join('-')
  if (os.startsWith('unknown-linux-')) return `linux-${arch}-${os.slice('unknown-linux-'.length)}`
  if (os === 'apple-darwin') return `darwin-${arch}`
  if (os === 'pc-windows-msvc') return `win32-${arch}-msvc`
  return `${os}-${arch}`
}

/** This process's platform. */
function currentPlatform() {
  const base = `${process.platform}-${process.arch}`
  if (process.platform === 'win32') return `${base}-msvc`
  if (process.platform !== 'linux') return base
  const header = process.report?.getReport?.()?.header
  return `${base}-${header?.glibcVersionRuntime ? 'gnu' : 'musl'}`
}

module.exports = { currentPlatform, platformOfTarget }
