// The package as an ES module user sees it under moduleResolution "nodenext": `steadfast`
// resolves through package.json "exports" (a self-reference here) to lib/index.d.ts.
import { Client, Runtime, SqliteProvider, defineActivity, defineOrchestration, type Diagnostic, type RuntimeOptions } from 'steadfast'
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
const welcome = defineActivity('Welcome', async (_ctx, name: string) => `welcome, ${name}`)
const onboard = defineOrchestration('Onboard', function* (ctx, name: string) {
  return yield* ctx.scheduleActivity(welcome, name)
})
runtime.registerActivity(welcome).registerOrchestration(onboard)
await client.startOrchestration('onboard-1', onboard, 'Ada')
const welcomed: string = await client.waitForOrchestrationTyped('onboard-1', 1000, { orchestration: onboard })
// @ts-expect-error Onboard takes a name
await client.startOrchestration('onboard-2', onboard, { name: 'Ada' })
export { client, welcomed }
