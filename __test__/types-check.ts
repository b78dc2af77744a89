// Compile-only check of lib/index.d.ts (`npm run typecheck`); never executed.
import { Client, PostgresProvider, Runtime, SqliteProvider, type DeadLetter, type Diagnostic, type RuntimeOptions } from 'steadfast'
import {
  initTracing,
  MAX_CUSTOM_STATUS_BYTES,
  MAX_KV_KEYS,
  MAX_KV_VALUE_BYTES,
  MAX_TAG_NAME_BYTES,
  MAX_WORKER_TAGS,
  type DeleteInstanceResult,
  type ExecutionInfo,
  type HistoryEvent,
  type InstanceFilter,
  type InstanceTree,
  type OrchestrationStatus,
  type PruneOptions,
  type PruneResult,
  type QueueDepths,
  type SystemMetrics,
  type SystemStats,
  type TracingOptions,
} from 'steadfast'

declare function use(...values: unknown[]): void

async function main(): Promise<void> {
  const provider = Math.random() > 0.5 ? await SqliteProvider.inMemory() : await PostgresProvider.connectWithOptions({ url: 'postgres://u@h/db', schema: 'app', polling: 'sessionFree' })
  const entra = await PostgresProvider.connectWithEntra('db.postgres.database.azure.com', 5432, 'app', 'app-identity', {
    refreshIntervalMs: 600_000,
    getToken: async () => ({ token: 'eyJ...', expiresOnTimestamp: Date.now() + 3_600_000 }),
  })
  use(entra.schema, await PostgresProvider.connectWithSchemaAndEntra('h', 5432, 'db', 'u', 'app', { sslMode: 'verify-ca', getToken: () => 'token' }))
  // @ts-expect-error no plaintext connections for tokens
  use(PostgresProvider.connectWithEntra('h', 5432, 'db', 'u', { sslMode: 'disable' }))
  // @ts-expect-error a token is a string or { token }
  use(PostgresProvider.connectWithEntra('h', 5432, 'db', 'u', { getToken: () => 42 }))
  // @ts-expect-error the port is a number
  use(PostgresProvider.connectWithEntra('h', '5432', 'db', 'u'))
  const options: RuntimeOptions = { maxAttempts: 3, workerTagFilter: { tags: ['gpu'] }, fetchFanout: 4, orphanTimeoutMs: 60_000, logFormat: 'json' }
  const rt = new Runtime(provider, options)
  rt.registerActivityTyped('Mul', async (_ctx, input: { a: number; b: number }) => input.a * input.b)
  rt.registerActivity('Add', async (ctx, input: { a: number; b: number }) => {
    ctx.traceInfo(`adding for ${ctx.instanceId}`)
    if (ctx.isCancelled()) throw new Error('cancelled')
    const signal: AbortSignal = ctx.signal
    signal.throwIfAborted()
    // @ts-expect-error the signal is read-only
    ctx.signal = new AbortController().signal
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
  rt.registerOrchestration('Context', function* (ctx, input: { peer: string }) {
    const onSession: number = yield ctx.scheduleActivityOnSession<number>('Add', { a: 1, b: 2 }, 'session-1')
    yield ctx.scheduleActivity('Add', { a: 1, b: 2 }, { sessionId: 's', tag: 'gpu' })
    yield ctx.scheduleActivityWithRetryOnSession('Add', null, { maxAttempts: 2, backoff: 'none' }, 'session-1')
    const message: { seq: number } = yield ctx.dequeueEvent<{ seq: number }>('inbox')
    const peerValue: string | null = yield ctx.getValueFromInstance(input.peer, 'color')
    const detached: null = yield ctx.startOrchestration('Sum', 'other-1', { a: 1, b: 1 })
    yield ctx.startOrchestrationVersioned('Sum', '2.0.0', 'other-2', null)
    yield ctx.scheduleSubOrchestrationVersioned('Sum', '2.0.0', { a: 1, b: 1 })
    yield ctx.scheduleSubOrchestrationVersionedWithId('Sum', '2.0.0', 'child-1', { a: 1, b: 1 })
    const typed = yield ctx.allTyped([ctx.scheduleActivityTyped('Add', null), ctx.dequeueEventTyped('inbox')])
    const raced = yield ctx.raceTyped(ctx.waitForEventTyped('go'), ctx.scheduleTimer(5))
    ctx.clearAllValues()
    const all: Record<string, string> = ctx.getKvAllValues()
    const keys: string[] = ctx.getKvAllKeys()
    const pruned: number = ctx.pruneKvValuesUpdatedBefore(Date.now()) + ctx.getKvLength()
    ctx.traceDebug('x')
    use(onSession, message.seq, peerValue, detached, typed, raced, all, keys, pruned, MAX_KV_KEYS + MAX_KV_VALUE_BYTES + MAX_CUSTOM_STATUS_BYTES)
    // @ts-expect-error the session id is required
    ctx.scheduleActivityOnSession('Add', null)
    yield ctx.continueAsNewVersioned(input, '2.0.0')
  })
  rt.registerActivity('Tagged', async (ctx) => {
    const tag: string | null = ctx.tag()
    const session: string | null = ctx.sessionId
    ctx.traceWarn(`${tag} ${session}`)
    return ctx.isCancelled()
  })
  rt.on('poisoned', (d) => use(d.instanceId, d.attemptCount, d.kind === 'poisoned'))
  rt.on('messagesOrphaned', (d) => use(d.instanceId, d.messageKind, d.kind === 'messagesOrphaned'))
  rt.on('eventLoopStalled', (d) => use(d.stalledMs, d.renewalsRefused, d.fetchesRefused, d.acksRefused, d.thresholdMs))
  // @ts-expect-error a stall report is not about one instance
  rt.on('eventLoopStalled', (d) => use(d.instanceId))
  rt.once('poisoned', (d) => use(d.attemptCount))
  rt.addListener('claimExhausted', (d) => use(d.reason))
  rt.prependListener('diagnostic', (d) => use(d.kind))
  rt.removeAllListeners('poisoned')
  use(rt.listenerCount('eventLoopStalled'))
  // @ts-expect-error not an event a Runtime emits
  rt.on('poisonned', () => {})
  // @ts-expect-error a poisoned diagnostic has no stalledMs
  rt.once('poisoned', (d) => use(d.stalledMs))
  rt.on('orchestrationStarted', (e) => use(e.name, e.version, e.parentInstanceId, e.executionId, e.at))
  rt.once('activityFailed', (e) => use(e.activityId, e.name, e.error, e.errorCategory === 'poison'))
  rt.on('orchestrationFailed', (e) => use(e.error, e.instanceId))
  // @ts-expect-error a completion carries no error
  rt.on('orchestrationCompleted', (e) => use(e.error))
  // @ts-expect-error lifecycle events are not diagnostics: no attemptCount
  rt.on('orchestrationContinuedAsNew', (e) => use(e.attemptCount))
  rt.on('diagnostic', (d: Diagnostic) => {
    if (d.kind === 'poisonLost') use(d.reason)
    if (d.kind === 'eventLoopStalled') use(d.stalledMs)
  })
  await rt.start()
  const client = new Client(provider)
  await client.startOrchestration('i1', 'Sum', { a: 1, b: 2 })
  await client.enqueueEvent('i1', 'inbox', { seq: 1 })
  const status = await client.waitForOrchestration('i1', 5000)
  use(await client.waitForOrchestration('i1', 5000, { signal: AbortSignal.timeout(100) }))
  use(await client.waitForValue('i1', 'k', 5000, { signal: new AbortController().signal }))
  // @ts-expect-error a wait's options hold a signal, not a timeout
  use(await client.waitForOrchestration('i1', 5000, { timeoutMs: 5 }))
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

// Client API beyond the first slice, initTracing and the limits (helper A1).
async function clientApi(client: Client): Promise<void> {
  const s: OrchestrationStatus = await client.waitForStatusChange('i1', 0)
  const s2 = await client.waitForStatusChange('i1', s.customStatusVersion, 100, 5000)
  await client.enqueueEvent('i1', 'inbox', { n: 1 })
  await client.enqueueEventTyped<{ n: number }>('i1', 'inbox', { n: 2 })
  await client.raiseEventTyped('i1', 'go')
  await client.startOrchestrationTyped('i2', 'Sum', { a: 1, b: 2 })
  await client.startOrchestrationVersionedTyped('i3', 'Sum', null, '2.0.0')
  const total: number = await client.waitForOrchestrationTyped<number>('i2', 1000)
  const value: string | null = await client.getValue('i1', 'k')
  const waited: string = await client.waitForValue('i1', 'k', 100)
  const all: Record<string, string> = await client.getKvAllValues('i1')
  const m: SystemMetrics = await client.getSystemMetrics()
  const q: QueueDepths = await client.getQueueDepths()
  const stats: SystemStats | null = await client.getOrchestrationStats('i1')
  const ids: string[] = await client.listInstancesByStatus('ContinuedAsNew')
  const execs: number[] = await client.listExecutions('i1')
  const info: ExecutionInfo = await client.getExecutionInfo('i1', execs[0] ?? 1)
  const history: HistoryEvent[] = await client.readExecutionHistory('i1', info.executionId)
  const tree: InstanceTree = await client.getInstanceTree('i1')
  const filter: InstanceFilter = { instanceIds: tree.allIds, completedBefore: Date.now(), limit: 10 }
  const deleted: DeleteInstanceResult = await client.deleteInstanceBulk(filter)
  const options: PruneOptions = { keepLast: 2 }
  const pruned: PruneResult = await client.pruneExecutions('i1', options)
  const bulk: PruneResult = await client.pruneExecutionsBulk(filter, { completedBefore: 0 })
  await client.deleteInstanceBulk()
  await client.pruneExecutionsBulk()
  use(s2.status, total + 1, value, waited, all, m.totalEvents, q.timerQueue, stats?.kvUserKeyCount, ids)
  use(info.status === 'ContinuedAsNew', info.completedAt, history.map((e) => (e.data ? JSON.parse(e.data) : e.kind)))
  use(deleted.instancesDeleted, pruned.executionsDeleted + bulk.instancesProcessed)
  // @ts-expect-error statuses are the four duroxide names
  use(client.listInstancesByStatus('completed'))
  // @ts-expect-error unknown filter keys are rejected
  use(client.deleteInstanceBulk({ ids: ['a'] }))
  // @ts-expect-error execution ids are numbers
  use(client.getExecutionInfo('i1', '1'))
  const tracing: TracingOptions = { logFile: '/tmp/steadfast.log', logLevel: 'debug', logFormat: 'json' }
  initTracing(tracing)
  // @ts-expect-error logFile is required
  initTracing({ logLevel: 'info' })
  const limits: number[] = [MAX_KV_KEYS, MAX_KV_VALUE_BYTES, MAX_CUSTOM_STATUS_BYTES, MAX_WORKER_TAGS, MAX_TAG_NAME_BYTES]
  use(limits)
}

use(clientApi)
