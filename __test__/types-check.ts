// Compile-only check of lib/index.d.ts (`npm run typecheck`); never executed.
import { Client, PostgresProvider, Runtime, SqliteProvider, type DeadLetter, type Diagnostic, type RuntimeOptions } from 'steadfast'

declare function use(...values: unknown[]): void

async function main(): Promise<void> {
  const provider = Math.random() > 0.5 ? await SqliteProvider.inMemory() : await PostgresProvider.connectWithOptions({ url: 'postgres://u@h/db', schema: 'app', polling: 'sessionFree' })
  const options: RuntimeOptions = { maxAttempts: 3, workerTagFilter: { tags: ['gpu'] }, fetchFanout: 4, logFormat: 'json' }
  const rt = new Runtime(provider, options)
  rt.registerActivity('Add', async (ctx, input: { a: number; b: number }) => {
    ctx.traceInfo(`adding for ${ctx.instanceId}`)
    if (ctx.isCancelled()) throw new Error('cancelled')
    use(await ctx.getClient().getStatus(ctx.instanceId))
    return input.a + input.b
  })
  rt.registerOrchestration('Sum', function* (ctx, input: { a: number; b: number }) {
    const sum: number = yield ctx.scheduleActivity<number>('Add', input).withTag('gpu')
    yield ctx.scheduleTimer(10)
    const all = yield ctx.all([ctx.scheduleActivity('Add', input), ctx.waitForEvent('go')])
    const race = yield ctx.race(ctx.scheduleTimer(5), ctx.scheduleSubOrchestration('Child', 1, { version: '1.0.0' }), ctx.newGuid())
    ctx.setCustomStatus('done')
    ctx.setValue('k', 'v')
    use(all, race, ctx.getValue('k'), ctx.executionId + 1)
    if (sum < 0) yield ctx.continueAsNew(input)
    return sum
  })
  rt.registerOrchestrationVersioned('Sum', '2.0.0', function* (ctx) {
    return yield ctx.scheduleActivityWithRetry('Add', { a: 1, b: 2 }, { maxAttempts: 3, timeoutMs: 100, backoff: { kind: 'exponential', baseMs: 10 } })
  })
  rt.on('poisoned', (d) => use(d.instanceId, d.attemptCount, d.kind === 'poisoned'))
  rt.on('diagnostic', (d: Diagnostic) => {
    if (d.kind === 'poisonLost') use(d.reason)
  })
  await rt.start()
  const client = new Client(provider)
  await client.startOrchestration('i1', 'Sum', { a: 1, b: 2 })
  const status = await client.waitForOrchestration('i1', 5000)
  use(status.output, status.customStatusVersion, rt.metricsSnapshot()?.orchStarts)
  const letters: DeadLetter[] = await client.listDeadLetters({ instanceId: 'i1', afterId: 0, limit: 50 })
  for (const d of letters) {
    const queue: 'orchestrator' | 'worker' = d.queue
    const executionId: number | null = d.executionId
    const item: unknown = JSON.parse(d.workItem)
    use(queue, executionId, item, d.reason === 'attempt_ceiling', d.deadAt - d.enqueuedAt)
  }
  const one: DeadLetter | null = await client.getDeadLetter(1)
  const requeued: boolean = await client.requeueDeadLetter(one?.id ?? 1)
  const purged: number = await client.purgeDeadLetters({ instanceId: 'i1', deadBeforeMs: Date.now() })
  use(requeued, purged + (await client.purgeDeadLetters()), await client.listDeadLetters())
  // @ts-expect-error deadBeforeMs is a purge option only
  use(client.listDeadLetters({ deadBeforeMs: 1 }))
  // @ts-expect-error ids are numbers
  use(client.getDeadLetter('1'))
  await rt.shutdown(1000)
}

use(main)
