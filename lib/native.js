'use strict'

// The generated napi-rs loader (index.js at the package root) picks the binary for this
// platform: a local steadfast.<platform>.node, else the steadfast-<platform> package. On
// Linux it tells musl from glibc by the system's /usr/bin/ldd before asking the process, so
// a musl Node on a glibc system (or the reverse) looks for the other C library's binary;
// when it fails, the binary for the platform the process itself reports is loaded directly.
// When that fails too, the loader's own message blames npm even on a platform nothing is
// built for; this one names the platform and the platforms that have a binary
// (package.json "napi.targets").

const { napi } = require('../package.json')
const { currentPlatform, platformOfTarget } = require('./platforms.js')

function loadError(code, message, cause) {
  const err = new Error(message, { cause })
  err.code = code
  return err
}

/** The binary of `platform`: a local steadfast.<platform>.node, else its package. */
function loadPlatform(platform) {
  try {
    return require(`../steadfast.${platform}.node`)
  } catch {
    return require(`steadfast-${platform}`)
  }
}

function load() {
  try {
    return require('../index.js')
  } catch (e) {
    const here = currentPlatform()
    if (process.platform === 'linux') {
      try {
        return loadPlatform(here)
      } catch {
        // Reported below, with the loader's error.
      }
    }
    const supported = napi.targets.map(platformOfTarget)
    if (!supported.includes(here)) {
      throw loadError(
        'ERR_STEADFAST_UNSUPPORTED_PLATFORM',
        `steadfast has no native binary for this platform (${here}); supported platforms: ${supported.join(', ')}`,
        e,
      )
    }
    throw loadError(
      'ERR_STEADFAST_NATIVE_LOAD',
      `steadfast's native binary for ${here} could not be loaded: install the package steadfast-${here} ` +
        `(an optional dependency npm may have skipped) or, in a checkout, build it with ./scripts/build-addon.sh. ` +
        `Loader said: ${e.message}`,
      e,
    )
  }
}

module.exports = load()
