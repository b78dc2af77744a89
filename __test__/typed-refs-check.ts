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
