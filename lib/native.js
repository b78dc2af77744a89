'use strict'

// The generated napi-rs loader (index.js at the package root) picks the binary for this
// platform: a local steadfast.<platform>.node, else the steadfast-<platform> package.
module.exports = require('../index.js')
