// The README's Node quickstarts: the first two ```js blocks of its "Quick start" section,
// an ES module, then CommonJS. Each prints the finished instance's status and output.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export function readmeQuickstarts() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
  if (blocks.length < 2) throw new Error('README: two ```js quickstart blocks expected in "Quick start"')
  return { esm: blocks[0], cjs: blocks[1] }
}

/** What a quickstart prints when its instance completed. */
export const QUICKSTART_OUTPUT = [/status: 'Completed'/, /output: 'hello Ada'/]
