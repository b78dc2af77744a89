'use strict'

// The page's files (./static), read once at start-up and served from memory by name only:
// no path from a request ever reaches the file system.

const fs = require('node:fs')
const path = require('node:path')

const STATIC_DIR = path.join(__dirname, 'static')

const CONTENT_TYPES = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
})

/** Map of URL path (`/`, `/app.js`, …) to `{ contentType, body }`. */
function loadStaticFiles(dir = STATIC_DIR) {
  const files = new Map()
  for (const name of fs.readdirSync(dir)) {
    const contentType = CONTENT_TYPES[path.extname(name)]
    if (!contentType) continue
    const file = { contentType, body: fs.readFileSync(path.join(dir, name)) }
    files.set(`/${name}`, file)
    if (name === 'index.html') files.set('/', file)
  }
  return files
}

module.exports = { loadStaticFiles }
