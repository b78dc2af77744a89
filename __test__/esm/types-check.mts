// The package as an ES module user sees it under moduleResolution "nodenext": `steadfast`
// resolves through package.json "exports" (a self-reference here) to lib/index.d.ts.
import { Client, Runtime, SqliteProvider, type Diagnostic, type RuntimeOptions } from 'steadfast'
import steadfast from 'steadfast'

const options: RuntimeOptions = { maxAttempts: 5, eventLoopStallMs: 10_000 }
const provider = await SqliteProvider.inMemory()
const runtime = new Runtime(provider, options)
runtime.registerOrchestration('Hello', function* (ctx, name: string) {
  return yield ctx.scheduleActivity('Greet', name)
})
runtime.on('diagnostic', (d: Diagnostic) => console.log(d.kind))
const client: InstanceType<typeof steadfast.Client> = new Client(provider)
// @ts-expect-error options are checked
new Runtime(provider, { maxAtempts: 5 })
export { client }
