// The ES module entry (package.json "exports" → "import"). Node finds the CommonJS entry's
// export names by reading its `module.exports = { … }` literal, so they re-export as named
// exports; the whole of it is the default export. `__test__/readme.test.mjs` checks that
// the two entries export the same names.
export * from './index.js'
export { default } from './index.js'
