// Compile-only check of the typed references in lib/index.d.ts (`npm run typecheck`); never
// executed. Each @ts-expect-error is a mistake the types must catch.
import {
  Client,
  defineActivity,
  defineOrchestration,
  defineOrchestrationVersioned,
  Runtime,
  SqliteProvider,
  type ActivityRef,
  type InputOf,
  type Json,
  type OrchestrationRef,
  type OrchestrationStatus,
  type OutputOf,
  type ScheduledTask,
} from 'steadfast'

declare function use(...values: unknown[]): void

interface Order {
  id: string
  items: number[]
}

const total = defineActivity('Total', async (_ctx, order: Order) => order.items.reduce((a, b) => a + b, 0))
const receipt = defineActivity('Receipt', (_ctx, input: { id: string; total: number }) => `${input.id}: ${input.total}`)
const now = defineActivity('Now', async () => Date.now())

const child = defineOrchestration('Child', function* (ctx, n: number) {
  const at: number = yield* ctx.scheduleActivity(now)
  return { doubled: n * 2, at }
})

const checkout = defineOrchestration('Checkout', function* (ctx, order: Order) {
  const sum = yield* ctx.scheduleActivity(total, order)
  const text = yield* ctx.scheduleActivity(receipt, { id: order.id, total: sum }, { tag: 'mail' })
  const retried: number = yield* ctx.scheduleActivityWithRetry(total, order, { maxAttempts: 3 })
  const onSession: number = yield* ctx.scheduleActivityOnSession(total, order, 'session-1')
  const { doubled } = yield* ctx.scheduleSubOrchestration(child, sum)
  const withId = yield* ctx.scheduleSubOrchestrationWithId(child, `${ctx.instanceId}-child`, 1)
  const joined = yield* ctx.all([ctx.scheduleActivity(total, order), ctx.scheduleTimer(5)])
  const raced = yield* ctx.race(ctx.scheduleActivity(receipt, { id: 'x', total: 1 }), ctx.waitForEvent<string>('go'))
  yield* ctx.startOrchestration(child, 'detached-1', 3)
  // A plain yield still works; its value is untyped.
  const plain = yield ctx.scheduleActivity(total, order)
  use(retried, onSession, withId.at, plain, raced.value.toUpperCase(), raced.index)
  if ('ok' in joined[0]) use(joined[0].ok.toFixed())
  if ('ok' in joined[1]) use(joined[1].ok === null)

  // @ts-expect-error the input of Total is an Order
  yield* ctx.scheduleActivity(total, { id: order.id })
  // @ts-expect-error Receipt yields a string, not a number
  const wrongOutput: number = yield* ctx.scheduleActivity(receipt, { id: 'x', total: 1 })
  // @ts-expect-error the sum is a number
  use(sum.toUpperCase())
  // @ts-expect-error Total needs its input
  yield* ctx.scheduleActivity(total)
  // @ts-expect-error an activity reference is no orchestration
  yield* ctx.scheduleSubOrchestration(total, order)
  // @ts-expect-error an orchestration reference is no activity
  yield* ctx.scheduleActivity(child, 1)
  // @ts-expect-error the child takes a number
  yield* ctx.scheduleSubOrchestration(child, 'one')
  // @ts-expect-error the retry policy is required
  yield* ctx.scheduleActivityWithRetry(total, order)
  use(wrongOutput)
  return { text, total: sum, doubled }
})

const checkoutV2 = defineOrchestrationVersioned('Checkout', '2.0.0', function* (ctx, order: Order) {
  return { total: yield* ctx.scheduleActivity(total, order), version: 2 as const }
})

// duroxide-node's *Typed and *Versioned names take references like their plain counterparts.
const aliases = defineOrchestration('Aliases', function* (ctx, order: Order) {
  const sum: number = yield* ctx.scheduleActivityTyped(total, order)
  const tagged: number = yield* ctx.scheduleActivityTyped(total, order, { tag: 'fast' })
  const onSession: number = yield* ctx.scheduleActivityOnSessionTyped(total, order, 's1')
  const retried: number = yield* ctx.scheduleActivityWithRetryTyped(total, order, { maxAttempts: 2 })
  const both: number = yield* ctx.scheduleActivityWithRetryOnSessionTyped(total, order, { maxAttempts: 2 }, 's1')
  // A string result holding JSON is decoded once more, so it may be any JSON value.
  const decoded: Json = yield* ctx.scheduleActivityTyped(receipt, { id: 'x', total: 1 })
  const { doubled } = yield* ctx.scheduleSubOrchestrationTyped(child, 2, { instanceId: 'kid-0' })
  const kid = yield* ctx.scheduleSubOrchestrationWithIdTyped(child, 'kid-1', 3)
  const pinned = yield* ctx.scheduleSubOrchestrationVersioned(checkoutV2, '2.0.0', order)
  const pinnedWithId = yield* ctx.scheduleSubOrchestrationVersionedWithId(child, '1.0.0', 'kid-2', 5)
  const detached: null = yield* ctx.startOrchestrationVersioned(child, '1.0.0', 'd1', 6)
  yield* ctx.startOrchestrationTyped(child, 'd2', 7)
  yield* ctx.startOrchestrationVersionedTyped(checkoutV2, '2.0.0', 'd3', order)
  const joined = yield* ctx.allTyped([ctx.scheduleActivityTyped(total, order), ctx.scheduleTimer(1)])
  const raced = yield* ctx.raceTyped(ctx.scheduleActivity(total, order), ctx.scheduleActivity(now))
  use(sum, tagged, onSession, retried, both, decoded, doubled, kid.at, pinned.version, pinnedWithId.doubled, detached, raced.value.toFixed())
  if ('ok' in joined[0]) use(joined[0].ok.toFixed())

  // @ts-expect-error the input of Total is an Order
  yield* ctx.scheduleActivityTyped(total, { id: order.id })
  // @ts-expect-error Receipt's string result may be decoded into any JSON value
  const notText: string = yield* ctx.scheduleActivityTyped(receipt, { id: 'x', total: 1 })
  // @ts-expect-error Total yields a number
  use((yield* ctx.scheduleActivityWithRetryTyped(total, order, { maxAttempts: 1 })).toUpperCase())
  // @ts-expect-error the input of Total is an Order
  yield* ctx.scheduleActivityWithRetryOnSessionTyped(total, 1, { maxAttempts: 1 }, 's1')
  // @ts-expect-error an orchestration reference is no activity
  yield* ctx.scheduleActivityOnSessionTyped(child, 1, 's1')
  // @ts-expect-error the child takes a number
  yield* ctx.scheduleSubOrchestrationTyped(child, 'one')
  // @ts-expect-error the child's output has no field named missing
  use((yield* ctx.scheduleSubOrchestrationWithIdTyped(child, 'kid-3', 1)).missing)
  // @ts-expect-error an activity reference is no orchestration
  yield* ctx.scheduleSubOrchestrationVersioned(total, '1.0.0', order)
  // @ts-expect-error the child takes a number
  yield* ctx.scheduleSubOrchestrationVersionedWithId(child, '1.0.0', 'kid-4', 'five')
  // @ts-expect-error Checkout (2.0.0) needs its input
  yield* ctx.startOrchestrationVersioned(checkoutV2, '2.0.0', 'd4')
  // @ts-expect-error an activity reference cannot be started
  yield* ctx.startOrchestrationTyped(total, 'd5', order)
  // @ts-expect-error the input of Checkout is an Order
  yield* ctx.startOrchestrationVersionedTyped(checkoutV2, '2.0.0', 'd6', { id: 'x' })
  // @ts-expect-error Total yields a number
  if ('ok' in joined[0]) use(joined[0].ok.toUpperCase())
  use(notText)
  return sum
})

// The reference types, as a library built on them would see them.
const orderInput: InputOf<typeof checkout> = { id: 'o1', items: [1] }
const output: OutputOf<typeof checkout> = { text: 't', total: 1, doubled: 2 }
const sumTask: ScheduledTask<number> = null as unknown as ScheduledTask<OutputOf<typeof total>>
const anyActivity: ActivityRef = total
const anyOrchestration: OrchestrationRef = checkoutV2
const version: string | undefined = checkoutV2.version
use(orderInput, output, sumTask, anyActivity, anyOrchestration, version, total.name, total.fn)
// @ts-expect-error an activity reference is no OrchestrationRef
const notAnOrchestration: OrchestrationRef = total
// @ts-expect-error references are read-only
checkout.name = 'Other'
use(notAnOrchestration)

async function main(): Promise<void> {
  const provider = await SqliteProvider.inMemory()
  const runtime = new Runtime(provider)
  runtime.registerActivity(total).registerActivity(receipt).registerActivity(now)
  runtime.registerOrchestration(child).registerOrchestration(checkout).registerOrchestration(checkoutV2)
  // @ts-expect-error an activity reference is registered with registerActivity
  runtime.registerOrchestration(total)
  // @ts-expect-error an orchestration reference is registered with registerOrchestration
  runtime.registerActivity(checkout)
  runtime.registerOrchestrationVersioned(child, '3.0.0').registerOrchestrationTyped(aliases)
  const typedRuntime = new Runtime(provider)
  typedRuntime.registerActivityTyped(total).registerOrchestrationTyped(child).registerOrchestrationVersionedTyped(checkoutV2)
  typedRuntime.registerOrchestrationVersionedTyped(checkout, '1.5.0')
  // @ts-expect-error an unversioned reference needs a version
  runtime.registerOrchestrationVersioned(checkout)
  // @ts-expect-error an unversioned reference needs a version
  typedRuntime.registerOrchestrationVersionedTyped(checkout)
  // @ts-expect-error an activity reference is registered with registerActivityTyped
  typedRuntime.registerOrchestrationTyped(total)
  // @ts-expect-error an orchestration reference is registered with registerOrchestrationTyped
  typedRuntime.registerActivityTyped(checkout)
  // @ts-expect-error an activity reference is no orchestration
  typedRuntime.registerOrchestrationVersioned(total, '1.0.0')
  // @ts-expect-error a reference carries its function
  typedRuntime.registerActivityTyped(total, total.fn)
  await runtime.start()

  const client = new Client(provider)
  await client.startOrchestration('o1', checkout, { id: 'o1', items: [1, 2] })
  await client.startOrchestration('c1', child, 4)
  await client.startOrchestration('n1', 'Checkout', 'anything goes with a name')
  // @ts-expect-error the input of Checkout is an Order
  await client.startOrchestration('o2', checkout, { id: 'o2' })
  // @ts-expect-error Checkout needs its input
  await client.startOrchestration('o3', checkout)
  // @ts-expect-error an activity reference cannot be started
  await client.startOrchestration('o4', total, { id: 'o4', items: [] })
  await client.startOrchestrationTyped('t1', checkout, { id: 't1', items: [1] })
  await client.startOrchestrationVersioned('t2', checkoutV2, { id: 't2', items: [] }, '2.0.0')
  await client.startOrchestrationVersionedTyped('t3', checkoutV2, { id: 't3', items: [] }, '2.0.0')
  await client.startOrchestrationVersionedTyped('t4', 'Checkout', 'anything goes with a name', '2.0.0')
  // @ts-expect-error the input of Checkout is an Order
  await client.startOrchestrationTyped('t5', checkout, { id: 't5' })
  // @ts-expect-error Checkout needs its input
  await client.startOrchestrationTyped('t6', checkout)
  // @ts-expect-error the input of Checkout is an Order
  await client.startOrchestrationVersioned('t7', checkoutV2, 'x', '2.0.0')
  // @ts-expect-error an activity reference cannot be started
  await client.startOrchestrationVersionedTyped('t8', total, { id: 't8', items: [] }, '1.0.0')

  const status: OrchestrationStatus<OutputOf<typeof checkout>> = await client.waitForOrchestration('o1', 5000, { orchestration: checkout })
  use(status.output?.doubled.toFixed(), status.customStatusVersion)
  const result = await client.waitForOrchestrationTyped('o1', undefined, { orchestration: checkoutV2, signal: AbortSignal.timeout(1000) })
  const two: 2 = result.version
  const untyped = await client.waitForOrchestration('o1')
  use(two, untyped.output.anything)
  // @ts-expect-error Checkout's output has no field named missing
  use((await client.waitForOrchestrationTyped('o1', 5000, { orchestration: checkout })).missing)
  // @ts-expect-error the output of Child is an object
  const wrong: number = (await client.waitForOrchestration('c1', 5000, { orchestration: child })).output ?? 0
  // @ts-expect-error a wait is typed by an orchestration reference, not an activity's
  await client.waitForOrchestration('c1', 5000, { orchestration: total })
  use(wrong)
  await runtime.shutdown()
}

use(main)
