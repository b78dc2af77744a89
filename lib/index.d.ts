// Type definitions for steadfast (hand-written; the generated ../index.d.ts describes the
// internal native layer only).

import { EventEmitter } from 'node:events'

/** Any value that survives `JSON.stringify` / `JSON.parse`. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/**
 * Error raised by the native layer. `code` is stable, one of {@link SteadfastErrorCode}:
 * `ERR_STEADFAST_INVALID_ARGUMENT`, `ERR_STEADFAST_INVALID_OPTIONS`, `ERR_STEADFAST_REGISTRATION`,
 * `ERR_STEADFAST_INVALID_STATE`, `ERR_STEADFAST_PROVIDER_OPEN`, `ERR_STEADFAST_PROVIDER`,
 * `ERR_STEADFAST_TIMEOUT`, `ERR_STEADFAST_ABORTED` (a wait's `AbortSignal` fired),
 * `ERR_STEADFAST_NOT_FOUND`, `ERR_STEADFAST_INSTANCE_RUNNING`, `ERR_STEADFAST_INSTANCE_EXISTS`
 * (a start with `ifExists: 'throw'`), `ERR_STEADFAST_UNSUPPORTED` (the provider cannot do
 * this, e.g. dead letters on SQLite), `ERR_STEADFAST_PANIC`, `ERR_STEADFAST_ORCHESTRATION_FAILED`
 * (`waitForOrchestrationTyped` of an instance that failed).
 *
 * Argument and option validation happens in JS first and throws `TypeError` (codes
 * `ERR_INVALID_ARG_TYPE`, `ERR_INVALID_ARG_VALUE`) or `RangeError` (`ERR_OUT_OF_RANGE`) whose
 * message names the field and the rule. *
 * Loading the package (`require`/`import`) throws a plain `Error` when the native binary cannot
 * load: code `ERR_STEADFAST_UNSUPPORTED_PLATFORM` on a platform nothing is built for (the message
 * names it and the supported platforms), `ERR_STEADFAST_NATIVE_LOAD` when this platform's binary
 * is missing or broken (the message names the package to install); `cause` is the loader's error.
 */
export class SteadfastError extends Error {
  readonly code: SteadfastErrorCode
}

/**
 * Every `code` a {@link SteadfastError} carries: the native layer's (src/errors.rs) and
 * `ERR_STEADFAST_ORCHESTRATION_FAILED` (`waitForOrchestrationTyped`); a test checks they agree.
 */
export type SteadfastErrorCode =
  | 'ERR_STEADFAST_INVALID_ARGUMENT'
  | 'ERR_STEADFAST_INVALID_OPTIONS'
  | 'ERR_STEADFAST_REGISTRATION'
  | 'ERR_STEADFAST_INVALID_STATE'
  | 'ERR_STEADFAST_PROVIDER_OPEN'
  | 'ERR_STEADFAST_PROVIDER'
  | 'ERR_STEADFAST_TIMEOUT'
  | 'ERR_STEADFAST_ABORTED'
  | 'ERR_STEADFAST_NOT_FOUND'
  | 'ERR_STEADFAST_INSTANCE_RUNNING'
  | 'ERR_STEADFAST_INSTANCE_EXISTS'
  | 'ERR_STEADFAST_UNSUPPORTED'
  | 'ERR_STEADFAST_PANIC'
  | 'ERR_STEADFAST_ORCHESTRATION_FAILED'
  | 'ERR_STEADFAST_ENTRA_TOKEN'

/**
 * Throw it from an activity to fail it for good: a retry policy
 * (`scheduleActivityWithRetry`) stops at once, and the orchestration's `yield` throws a
 * `NonRetryableError` with the message, `code`, stack and own fields. An error of any class
 * with an own `nonRetryable: true` counts the same.
 */
export class NonRetryableError extends Error {
  constructor(message?: string, options?: { cause?: unknown })
  readonly name: 'NonRetryableError'
}

/** duroxide's limit on worker tags per filter. */
export const MAX_WORKER_TAGS: 5
/** duroxide's limit on the length of one tag, in UTF-8 bytes. */
export const MAX_TAG_NAME_BYTES: 256
/** duroxide's limits, checked by the context before a turn can break them. */
export const MAX_KV_KEYS: 150
export const MAX_KV_VALUE_BYTES: 65536
export const MAX_CUSTOM_STATUS_BYTES: 262144

// ---------------------------------------------------------------------------------------
// Providers
// ---------------------------------------------------------------------------------------

/** duroxide's bundled SQLite provider. Create with {@link SqliteProvider.open} or {@link SqliteProvider.inMemory}. */
export class SqliteProvider {
  private constructor()
  /**
   * Open a SQLite database, creating the file and its parent directories if missing.
   * @param path A file path or a `sqlite:` URL (`sqlite::memory:` for a private in-memory database).
   */
  static open(path: string): Promise<SqliteProvider>
  /** A fresh private in-memory database (gone when the process exits). */
  static inMemory(): Promise<SqliteProvider>
  /** Always `"sqlite"`. */
  readonly kind: 'sqlite'
}

/** Options of {@link PostgresProvider.connectWithOptions}. */
export interface PostgresConnectOptions {
  /** `postgres://` or `postgresql://` URL. Never echoed in errors or logs. */
  url: string
  /** Schema for all tables; created if missing. 1–63 of `[A-Za-z0-9_]`, not starting with a digit or `pg_`. Default `"steadfast"`. */
  schema?: string
  /** Pool size, 2–1000. Default 10 (or env `STEADFAST_PG_POOL_MAX`). */
  maxConnections?: number
  /** Wait for a pooled connection, 1–600000 ms. Default 10000. */
  acquireTimeoutMs?: number
  /** Server `lock_timeout` per statement, 1–600000 ms (not applied in `sessionFree` mode). Default 2000. */
  statementLockTimeoutMs?: number
  /** Server `statement_timeout` per statement, 1–3600000 ms (not applied in `sessionFree` mode; migrations run without it). A claim that runs out of it while reading its instance counts the attempt, so the attempt ceiling ends an instance that always does. Default 60000. */
  statementTimeoutMs?: number
  /** `"listen"`: long polling with LISTEN/NOTIFY. `"sessionFree"`: no session state (PgBouncer transaction mode); fetches are woken by this process's enqueues only and find other processes' work every `longPollRecheckMs` (and waits their ends). Default `"listen"`. */
  polling?: 'listen' | 'sessionFree'
  /** Apply pending migrations on connect. Default true; when false, connecting fails unless the schema is current. */
  runMigrations?: boolean
}

/** A Microsoft Entra ID access token, as `getToken` may give it (@azure/identity's `AccessToken` fits). */
export type EntraToken = string | { token: string; expiresOnTimestamp?: number }

/** Where a provider's Entra tokens come from, instead of the default credentials. */
export type TokenSource = () => EntraToken | Promise<EntraToken>

/** Options of {@link PostgresProvider.connectWithEntra} and {@link PostgresProvider.connectWithSchemaAndEntra}. */
export interface PostgresEntraOptions {
  /** The token's scope, 1–1024 bytes (another cloud has its own). Default `'https://ossrdbms-aad.database.windows.net/.default'`. */
  audience?: string
  /** Pool size, 2–1000. Default 10 (or env `STEADFAST_PG_POOL_MAX`). */
  maxConnections?: number
  /** Wait for a pooled connection, 1–600000 ms. Default 30000. */
  acquireTimeoutMs?: number
  /** Longest time a token is used for new connections, 1000–86400000 ms; a token is also replaced 5 minutes before it expires. Default 1200000. */
  refreshIntervalMs?: number
  /** TLS certificate checks: `'verify-full'` (the server's name and chain), `'verify-ca'` (the chain), `'require'` (encryption only). Default `'verify-full'`. */
  sslMode?: 'verify-full' | 'verify-ca' | 'require'
  /** Fetches each token (e.g. `() => credential.getToken(scope)` with @azure/identity). Default: workload identity, then managed identity, then the Azure CLI. */
  getToken?: TokenSource
}

/**
 * steadfast-pg, the PostgreSQL provider whose claims never block and whose poison
 * dispositions survive lost leases.
 *
 * Claim options (fetch fan-out, claim bounds, redelivery backoff, the attempt ceiling) are
 * runtime concerns and are set in {@link RuntimeOptions}: a {@link Runtime} started on a
 * PostgresProvider opens its own pool on the same database and schema with those options
 * merged in. Clients use this provider's pool.
 */
export class PostgresProvider {
  private constructor()
  /** Connect with default options, schema `"steadfast"`. */
  static connect(databaseUrl: string): Promise<PostgresProvider>
  /** Connect with default options in `schema` (created if missing). */
  static connectWithSchema(databaseUrl: string, schema: string): Promise<PostgresProvider>
  /** Connect with explicit options (validated first; errors name the field and the rule). */
  static connectWithOptions(options: PostgresConnectOptions): Promise<PostgresProvider>
  /**
   * Connect to Azure Database for PostgreSQL as `user` with a Microsoft Entra ID token for a
   * password (`sslmode` as `options.sslMode`), schema `"steadfast"`. The token is refreshed
   * for this provider and every runtime started on it until {@link close}; a failed refresh
   * keeps the last token, is retried sooner, and is reported by `process.emitWarning`.
   * Rejects with `ERR_STEADFAST_ENTRA_TOKEN` when no token can be had.
   */
  static connectWithEntra(host: string, port: number, database: string, user: string, options?: PostgresEntraOptions): Promise<PostgresProvider>
  /** {@link connectWithEntra} with the tables in `schema` (created if missing). */
  static connectWithSchemaAndEntra(
    host: string,
    port: number,
    database: string,
    user: string,
    schema: string,
    options?: PostgresEntraOptions,
  ): Promise<PostgresProvider>
  /** Always `"postgres"`. */
  readonly kind: 'postgres'
  /** The schema the tables live in. */
  readonly schema: string
  /** Close this provider's pool and stop its Entra token refresh (keep it open while runtimes started on it run: they get their tokens from it). Runtimes started on it keep their own pool until shutdown. */
  close(): Promise<void>
}

export type Provider = SqliteProvider | PostgresProvider

// ---------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------

/** An instance's status; `O` is the output's type, known when a wait is given an {@link OrchestrationRef}. */
export interface OrchestrationStatus<O = any> {
  status: 'NotFound' | 'Running' | 'Completed' | 'Failed'
  /** The orchestration's return value, parsed from JSON (Completed only). */
  output?: O
  /** Failure message (Failed only). */
  error?: string
  /** `application`, `infrastructure`, `configuration` or `poison` (Failed only). */
  errorCategory?: 'application' | 'infrastructure' | 'configuration' | 'poison'
  /** Last value of `ctx.setCustomStatus` (never parsed). */
  customStatus?: string
  /** Increments on every custom status change. */
  customStatusVersion: number
}

export interface InstanceInfo {
  instanceId: string
  orchestrationName: string
  orchestrationVersion: string
  currentExecutionId: number
  /** `Running`, `Completed`, `Failed` or `ContinuedAsNew`. */
  status: string
  /** Output (parsed from JSON) or error text of the current execution, when terminal. */
  output?: any
  /** ms since the epoch */
  createdAt: number
  /**
   * ms since the epoch: the latest of the instance's last turn (its latest history event),
   * its current execution's start or end, and its metadata's last change
   */
  updatedAt: number
  parentInstanceId?: string
}

export interface DeleteInstanceResult {
  instancesDeleted: number
  executionsDeleted: number
  eventsDeleted: number
  queueMessagesDeleted: number
}

/**
 * A message steadfast-pg moved out of its queue instead of delivering it again: poisoned by
 * the runtime, stopped by the claim's attempt ceiling, or undecodable. Nothing is lost: the
 * original work item is kept and can be requeued with {@link Client.requeueDeadLetter}.
 * Fields that do not apply are `null`.
 */
export interface DeadLetter {
  /** Store id: a positive integer, increasing in the order messages died. */
  id: number
  /** The queue the message came from and goes back to on requeue. */
  queue: 'orchestrator' | 'worker'
  instanceId: string
  executionId: number | null
  /** The activity's id within its execution (worker messages only). */
  activityId: number | null
  /** How many times the message had been handed out. */
  attemptCount: number
  /** The attempt limit in force when it died, if any. */
  maxAttempts: number | null
  /**
   * `poison`: the runtime failed it as poison; `attempt_ceiling`: the claim stopped it past
   * `maxAttempts + 1`; `undecodable`: its payload no longer deserializes.
   */
  reason: 'poison' | 'attempt_ceiling' | 'undecodable'
  /** The failure message, e.g. the poison details. */
  error: string | null
  /** The original serialized work item (duroxide's `WorkItem`), as JSON text, never parsed. */
  workItem: string
  sessionId: string | null
  /** The activity's worker tag, if it had one. */
  tag: string | null
  /** When the message was first enqueued, ms since the epoch. */
  enqueuedAt: number
  /** When it was dead-lettered, ms since the epoch (database clock). */
  deadAt: number
}

/** Options of {@link Client.listDeadLetters}. Unknown keys are rejected (`TypeError`). */
export interface ListDeadLettersOptions {
  /** Only this instance's dead letters (an instance id, 1–1024 bytes). Default: all instances. */
  instanceId?: string
  /** Keyset paging: only ids greater than this, 0–9007199254740991 (pass the last id of the previous page). Default 0. */
  afterId?: number
  /** Page size, an integer 1–10000. Default 100. */
  limit?: number
}

/** Options of {@link Client.purgeDeadLetters}. Unknown keys are rejected (`TypeError`). */
export interface PurgeDeadLettersOptions {
  /** Only this instance's dead letters (an instance id, 1–1024 bytes). Default: all instances. */
  instanceId?: string
  /** Only those dead strictly before this time, ms since the epoch, 0–8640000000000000 (e.g. `Date.now() - 86_400_000`). Default: any time. */
  deadBeforeMs?: number
}

/** Options of {@link Client.listInstances}. Unknown keys are rejected (`TypeError`). */
export interface ListInstancesOptions {
  /** Only instances whose current execution is in this status. Default: any status. */
  status?: 'Running' | 'Completed' | 'Failed' | 'ContinuedAsNew'
  /** Only instances of this orchestration (a name, 1–1024 bytes). Default: any orchestration. */
  orchestrationName?: string
  /** Only sub-orchestrations of this instance (an instance id, 1–1024 bytes). Default: any instance. */
  parentInstanceId?: string
  /** Only instances created at or after this time, ms since the epoch, 0–8640000000000000. Default: any time. */
  createdFromMs?: number
  /** Only instances created before this time, ms since the epoch, 0–8640000000000000. Default: any time. */
  createdBeforeMs?: number
  /** Page size, an integer 1–1000. Default 100. */
  limit?: number
  /** Where to go on: the `nextCursor` of the previous page (a string, 1–2104 bytes). Default: the first page. */
  cursor?: string
}

/** One page of {@link Client.listInstances}. */
export interface InstancePage {
  /** Newest first (by creation time, then instance id). */
  instances: InstanceInfo[]
  /** Pass as `cursor` for the next page; `null` after the last one. */
  nextCursor: string | null
}

/** duroxide's instance statuses, as {@link Client.listInstancesByStatus} accepts them. */
export type InstanceStatusName = 'Running' | 'Completed' | 'Failed' | 'ContinuedAsNew'

/** Store-wide counts ({@link Client.getSystemMetrics}). */
export interface SystemMetrics {
  totalInstances: number
  totalExecutions: number
  runningInstances: number
  completedInstances: number
  failedInstances: number
  totalEvents: number
}

/** Messages waiting (not leased) in each queue ({@link Client.getQueueDepths}). */
export interface QueueDepths {
  orchestratorQueue: number
  workerQueue: number
  timerQueue: number
}

/** Size of one instance's state ({@link Client.getOrchestrationStats}). */
export interface SystemStats {
  /** Events in the current execution's history. */
  historyEventCount: number
  historySizeBytes: number
  /** Messages queued for the instance. */
  queuePendingCount: number
  kvUserKeyCount: number
  kvTotalValueBytes: number
}

/** One execution of an instance (a new one starts on every continue-as-new). */
export interface ExecutionInfo {
  /** 1 for the first execution. */
  executionId: number
  status: InstanceStatusName
  /** Output, error text or (ContinuedAsNew) the next input, parsed from JSON when it is JSON; absent while running. */
  output?: any
  /** ms since the epoch */
  startedAt: number
  /** ms since the epoch; absent while running. */
  completedAt?: number
  eventCount: number
}

/** One history event ({@link Client.readExecutionHistory}). */
export interface HistoryEvent {
  eventId: number
  /** duroxide's `EventKind` variant name, e.g. `OrchestrationStarted`, `ActivityCompleted`, `TimerFired`, `QueueEventDelivered`. */
  kind: string
  /** The event this one completes, e.g. the `ActivityScheduled` of an `ActivityCompleted`. */
  sourceEventId?: number
  /** ms since the epoch */
  timestampMs: number
  /**
   * The payload as JSON text (always valid JSON; `JSON.parse` it), in duroxide-node's shapes:
   * `OrchestrationStarted` `{name, version, input}`, `ActivityScheduled` `{name, input}`,
   * `TimerCreated`/`TimerFired` `{fireAtMs}`, `ExternalEvent`/`QueueEventDelivered` `{name, data}`,
   * completions the result itself, failures duroxide's serialized `ErrorDetails`.
   * Absent for kinds without a payload.
   */
  data?: string
}

/** An instance and all its descendants (sub-orchestrations). */
export interface InstanceTree {
  rootId: string
  /** Every id in the tree, the root included. */
  allIds: string[]
  size: number
}

/**
 * Which instances a bulk operation selects; all criteria are ANDed. Unknown keys are
 * rejected (`TypeError`).
 */
export interface InstanceFilter {
  /** Only these instances (at most 10000 ids, each a valid instance id). Default: any instance. */
  instanceIds?: string[]
  /** Only instances whose current execution completed before this time, ms since the epoch (0–9007199254740991). Default: any time. */
  completedBefore?: number
  /** At most this many instances, 1–10000. Default 1000 (duroxide's). */
  limit?: number
}

/** Which executions {@link Client.pruneExecutions} deletes; the current execution never is. Unknown keys are rejected. */
export interface PruneOptions {
  /** Keep the newest N executions, 0–4294967295 (0 and 1 both keep only the current one). Default: keep only the current one. */
  keepLast?: number
  /** Only executions completed before this time, ms since the epoch (0–9007199254740991). Default: any time. */
  completedBefore?: number
}

export interface PruneResult {
  instancesProcessed: number
  executionsDeleted: number
  eventsDeleted: number
}

/** Options of a {@link Client} wait. Unknown keys are rejected (`TypeError`). */
export interface WaitOptions {
  /** Ends the wait early: it rejects with `signal.reason` (an already aborted signal, at once). */
  signal?: AbortSignal
}

/**
 * Options of {@link Client.waitForOrchestration} and {@link Client.waitForOrchestrationTyped}.
 * Unknown keys are rejected (`TypeError`).
 */
export interface OrchestrationWaitOptions {
  /** Ends the wait early: it rejects with `signal.reason` (an already aborted signal, at once). */
  signal?: AbortSignal
  /**
   * The orchestration the instance runs, as a {@link defineOrchestration} reference: the output
   * gets its output type. Once the instance ended, the wait reads its orchestration's name and
   * rejects with a `TypeError` when it is another. Default: none.
   */
  orchestration?: OrchestrationRef
}

/** {@link OrchestrationWaitOptions} with the reference that types the output as `O`. */
export type TypedWaitOptions<O> = OrchestrationWaitOptions & { orchestration: OrchestrationRef<any, O> }

/**
 * Starts, signals, inspects and deletes orchestration instances. Inputs are `JSON.stringify`'d,
 * strictly: at most 16 MiB and 100 levels deep, no BigInt, function, symbol, NaN, ±Infinity,
 * cycle or lone surrogate (TypeError/RangeError; see docs/input-rules.md). Instance ids and
 * names: 1–1024 UTF-8 bytes, no NUL, no lone surrogate.
 *
 * On a {@link PostgresProvider} it also manages steadfast-pg's dead letters. On SQLite the
 * dead-letter methods reject with a {@link SteadfastError} of code `ERR_STEADFAST_UNSUPPORTED`
 * (after validating their arguments).
 */
export class Client {
  /** A client on `provider`'s store (no runtime needed). `TypeError` unless a SqliteProvider or PostgresProvider. */
  constructor(provider: Provider)
  /**
   * Start an instance of the latest registered version of `orchestrationName`. `input`
   * defaults to `null`. `instanceId` must not use the reserved marker `sub::`.
   * An id that already exists is not an error by default: the runtime consumes and ignores
   * the extra start. With `{ ifExists: 'throw' }` it rejects with `ERR_STEADFAST_INSTANCE_EXISTS`.
   */
  startOrchestration(instanceId: string, orchestrationName: string, input?: unknown, options?: StartOptions): Promise<void>
  /**
   * Start an instance of a {@link defineOrchestration} reference: its version when it has one,
   * else the latest registered. `input` must be of the reference's input type.
   */
  startOrchestration<R extends OrchestrationRef>(instanceId: string, orchestration: R, ...input: InputArgs<InputOf<R>>): Promise<void>
  startOrchestration<R extends OrchestrationRef>(instanceId: string, orchestration: R, input: InputOf<R>, options: StartOptions): Promise<void>
  /** Start an instance pinned to `version` (a semantic version like `"1.2.0"`). */
  startOrchestrationVersioned(instanceId: string, orchestrationName: string, input: unknown, version: string, options?: StartOptions): Promise<void>
  /**
   * Start an instance of a {@link defineOrchestration} reference pinned to `version`; for a
   * versioned reference `version` must be its own (`TypeError` otherwise).
   */
  startOrchestrationVersioned<R extends OrchestrationRef>(instanceId: string, orchestration: R, input: InputOf<R>, version: string, options?: StartOptions): Promise<void>
  /** Current status; `output` is parsed from JSON (duroxide-node leaves it as text). Unknown ids give `NotFound`. */
  getStatus(instanceId: string): Promise<OrchestrationStatus>
  /**
   * Wait until the instance completes or fails; `output` is parsed from JSON.
   * Rejects with `code: 'ERR_STEADFAST_TIMEOUT'` after `timeoutMs` (default 30000), and with
   * `options.signal.reason` once that signal aborts (the wait then stops, natively too).
   * With `options.orchestration` (a {@link defineOrchestration} reference) the output is typed
   * by it (see {@link OrchestrationWaitOptions}).
   */
  waitForOrchestration<O>(instanceId: string, timeoutMs: number | undefined, options: TypedWaitOptions<O>): Promise<OrchestrationStatus<O>>
  waitForOrchestration(instanceId: string, timeoutMs?: number, options?: OrchestrationWaitOptions): Promise<OrchestrationStatus>
  /**
   * Wait until the custom-status version exceeds `lastSeenVersion` (pass the last
   * `customStatusVersion` seen, 0 for any) or the instance is terminal, checking every
   * `pollIntervalMs` (default 500, at least 1). Rejects with `ERR_STEADFAST_TIMEOUT` after
   * `timeoutMs` (default 30000), and with `options.signal.reason` once that signal aborts.
   */
  waitForStatusChange(instanceId: string, lastSeenVersion: number, pollIntervalMs?: number, timeoutMs?: number, options?: WaitOptions): Promise<OrchestrationStatus>
  /**
   * Deliver external event `eventName` to a waiting `ctx.waitForEvent(eventName)`. An event
   * raised before the orchestration started waiting for it is dropped (duroxide's positional
   * semantics): signal readiness, e.g. with a custom status, before raising.
   */
  raiseEvent(instanceId: string, eventName: string, data?: unknown): Promise<void>
  /**
   * Put a message on the instance's queue `queueName`, for `ctx.dequeueEvent(queueName)`.
   * Messages wait in FIFO order until dequeued, even before anyone subscribes, and survive
   * continue-as-new. The instance must have been started: messages sent to an instance that
   * does not exist yet are dropped when the runtime picks them up (with a warning).
   */
  enqueueEvent(instanceId: string, queueName: string, data?: unknown): Promise<void>
  /** Request cancellation; the instance fails with `canceled: <reason>`. Default reason `''`. */
  cancelInstance(instanceId: string, reason?: string): Promise<void>
  /** Alias of {@link startOrchestration} (duroxide-node name). */
  startOrchestrationTyped<In = unknown>(instanceId: string, orchestrationName: string, input?: In, options?: StartOptions): Promise<void>
  startOrchestrationTyped<R extends OrchestrationRef>(instanceId: string, orchestration: R, ...input: InputArgs<InputOf<R>>): Promise<void>
  startOrchestrationTyped<R extends OrchestrationRef>(instanceId: string, orchestration: R, input: InputOf<R>, options: StartOptions): Promise<void>
  /** Alias of {@link startOrchestrationVersioned}. */
  startOrchestrationVersionedTyped<In = unknown>(instanceId: string, orchestrationName: string, input: In, version: string, options?: StartOptions): Promise<void>
  startOrchestrationVersionedTyped<R extends OrchestrationRef>(instanceId: string, orchestration: R, input: InputOf<R>, version: string, options?: StartOptions): Promise<void>
  /** Alias of {@link raiseEvent}. */
  raiseEventTyped<T = unknown>(instanceId: string, eventName: string, data?: T): Promise<void>
  /** Alias of {@link enqueueEvent}. */
  enqueueEventTyped<T = unknown>(instanceId: string, queueName: string, data?: T): Promise<void>
  /**
   * Wait for the instance and return its parsed output. A failed instance rejects with a
   * `SteadfastError` of code `ERR_STEADFAST_ORCHESTRATION_FAILED` (message = the failure,
   * `errorCategory` set); a timeout with `ERR_STEADFAST_TIMEOUT`; an abort of
   * `options.signal` with its reason. Default timeout 30000 ms. With `options.orchestration`
   * (a {@link defineOrchestration} reference) the output is typed by it.
   */
  waitForOrchestrationTyped<O>(instanceId: string, timeoutMs: number | undefined, options: TypedWaitOptions<O>): Promise<O>
  waitForOrchestrationTyped<T = any>(instanceId: string, timeoutMs?: number, options?: OrchestrationWaitOptions): Promise<T>
  /** One value of the instance's key-value store (`ctx.setValue`), or `null`. Values are returned as stored (text). */
  getValue(instanceId: string, key: string): Promise<string | null>
  /**
   * Wait until `key` has a value and return it. Rejects with `ERR_STEADFAST_TIMEOUT`
   * (`Timed out waiting for value '<key>' on instance '<id>'`) after `timeoutMs` (default 30000),
   * and with `options.signal.reason` once that signal aborts.
   */
  waitForValue(instanceId: string, key: string, timeoutMs?: number, options?: WaitOptions): Promise<string>
  /** The instance's whole key-value store (`{}` when empty or unknown). */
  getKvAllValues(instanceId: string): Promise<Record<string, string>>
  /** Store-wide instance, execution and event counts. */
  getSystemMetrics(): Promise<SystemMetrics>
  /** Messages waiting in the orchestrator, worker and timer queues. */
  getQueueDepths(): Promise<QueueDepths>
  /** Size of the instance's history, queue and key-value store; `null` for an unknown instance. */
  getOrchestrationStats(instanceId: string): Promise<SystemStats | null>
  /** Every instance id in the store. */
  listAllInstances(): Promise<string[]>
  /** Ids of the instances in `status` (`TypeError` for anything else, e.g. `"completed"`). */
  listInstancesByStatus(status: InstanceStatusName): Promise<string[]>
  /** Metadata of an instance; `output` parsed from JSON. Rejects with `SteadfastError` when it does not exist. */
  getInstanceInfo(instanceId: string): Promise<InstanceInfo>
  /**
   * One page of instances, newest first, filtered. Walking the pages with `nextCursor` sees
   * every instance that existed when the walk began exactly once, whatever is created
   * meanwhile. On PostgreSQL the database pages (an index on creation time); on SQLite every
   * instance's info is read for each page. A cursor from another listing or backend rejects
   * with `ERR_STEADFAST_INVALID_ARGUMENT`.
   */
  listInstances(options?: ListInstancesOptions): Promise<InstancePage>
  /** Execution ids of the instance, oldest first (`[]` for an unknown instance). */
  listExecutions(instanceId: string): Promise<number[]>
  /** One execution; `executionId` a positive integer. Rejects with `SteadfastError` when absent. */
  getExecutionInfo(instanceId: string, executionId: number): Promise<ExecutionInfo>
  /** The history of one execution, in order; `executionId` a positive integer. */
  readExecutionHistory(instanceId: string, executionId: number): Promise<HistoryEvent[]>
  /** The instance and all its sub-orchestrations. */
  getInstanceTree(instanceId: string): Promise<InstanceTree>
  /**
   * Delete an instance, its sub-orchestrations and their histories. Without `force`
   * (default false) a running instance is refused (`ERR_STEADFAST_INSTANCE_RUNNING`); a
   * sub-orchestration cannot be deleted on its own (`ERR_STEADFAST_INVALID_ARGUMENT`); an
   * unknown id rejects with `ERR_STEADFAST_NOT_FOUND`.
   */
  deleteInstance(instanceId: string, force?: boolean): Promise<DeleteInstanceResult>
  /**
   * Delete every terminal root instance the filter selects (running ones and
   * sub-orchestrations are skipped). Default filter `{}`: any terminal instance, at most
   * 1000 per call.
   */
  deleteInstanceBulk(filter?: InstanceFilter): Promise<DeleteInstanceResult>
  /** Delete old executions of one instance (never the current one). Default options `{}`: all but the current. */
  pruneExecutions(instanceId: string, options?: PruneOptions): Promise<PruneResult>
  /** {@link pruneExecutions} on every instance the filter selects. */
  pruneExecutionsBulk(filter?: InstanceFilter, options?: PruneOptions): Promise<PruneResult>
  /**
   * Dead letters in id order, at most `limit` (default 100) with ids greater than `afterId`
   * (default 0), optionally only one instance's. PostgreSQL only. For the next page, pass the
   * last id returned as `afterId`.
   * Rejects with a `TypeError` / `RangeError` naming the option when one is malformed or unknown.
   */
  listDeadLetters(options?: ListDeadLettersOptions): Promise<DeadLetter[]>
  /** One dead letter, or `null` when there is none with this id. `id`: a positive safe integer. PostgreSQL only. */
  getDeadLetter(id: number): Promise<DeadLetter | null>
  /**
   * Put a dead letter back on its queue as a new message with a fresh attempt budget and
   * remove it from the store, in one transaction. Resolves `false` when there is no dead
   * letter with this id (e.g. already requeued or purged). `id`: a positive safe integer.
   * PostgreSQL only.
   *
   * The message is delivered as it was: an activity runs again even when its orchestration
   * has already failed (its result is then discarded).
   */
  requeueDeadLetter(id: number): Promise<boolean>
  /**
   * Delete dead letters for good; resolves how many were deleted. With no options, every dead
   * letter in the store is deleted. PostgreSQL only.
   */
  purgeDeadLetters(options?: PurgeDeadLettersOptions): Promise<number>
}

// ---------------------------------------------------------------------------------------
// Orchestrations
// ---------------------------------------------------------------------------------------

/**
 * A durable task. Only meaningful when `yield`ed from an orchestration generator. TypeScript
 * cannot type what a plain `yield task` evaluates to (it is `any`); `yield* task` evaluates to
 * the same result and is typed `T`.
 */
export class ScheduledTask<T = any> {
  private constructor()
  /** Route this activity to workers whose `workerTagFilter` accepts `tag` (activities only). */
  withTag(tag: string): this
  /** What makes `yield* task` work: it yields the task and returns its result. */
  [Symbol.iterator](): Generator<ScheduledTask<T>, T, any>
  /** @internal type carrier */
  readonly __result?: T
}

/** The result type of a task. */
export type ResultOf<Task> = Task extends ScheduledTask<infer T> ? T : never

/** Result of one task inside {@link OrchestrationContext.all}. */
export type JoinResult<T = any> = { ok: T } | { err: string }

/** Result of {@link OrchestrationContext.race}: the winner's position and value. */
export interface RaceResult<T = any> {
  index: number
  value: T
}

export type Backoff =
  | 'none'
  | 'fixed'
  | 'linear'
  | 'exponential'
  | { kind: 'none' }
  | { kind: 'fixed'; delayMs?: number }
  | { kind: 'linear'; baseMs?: number; maxMs?: number }
  | { kind: 'exponential'; baseMs?: number; multiplier?: number; maxMs?: number }

export interface RetryPolicy {
  /** Total attempts, 1–1000 (required). */
  maxAttempts: number
  /** Per-attempt timeout in ms, 0–4294967295; a timed-out attempt is not retried. Default: none. */
  timeoutMs?: number
  /**
   * All attempts and the backoff between them together, in ms, 1–4294967295: when it runs
   * out, the task fails with a `timeout: …` error and the running attempt is abandoned.
   * (duroxide-node reads it as the per-attempt timeout; for that, use `timeoutMs`.) Default: none.
   */
  totalTimeoutMs?: number
  /**
   * Delay between attempts. Default `'exponential'`: 100 ms × 2^(n−1), capped at 30 s.
   * `'fixed'`: 1000 ms. `'linear'`: 100 ms × n, capped at 30 s. `'none'`: no delay.
   * Object forms override those parameters.
   */
  backoff?: Backoff
}

/** Options of {@link OrchestrationContext.scheduleActivity}. */
export interface ActivityOptions {
  /** Run on the worker holding this session (see `scheduleActivityOnSession`); 1–1024 bytes. Default: none. */
  sessionId?: string
  /** Same as `.withTag(tag)`; 1–256 bytes. Default: none (untagged). */
  tag?: string
}

export interface SubOrchestrationOptions {
  /** Child instance id, 1–1024 bytes. Default: generated from the parent's. */
  instanceId?: string
  /** Child version, a semantic version. Default: latest registered. */
  version?: string
}

/**
 * What an orchestration generator receives. The generator is replayed from the start on every
 * turn, so it must be deterministic: use only `yield`ed tasks for anything that varies
 * (time, ids, I/O). Scheduling methods return tasks to `yield`; the others act immediately and
 * must be called synchronously from the generator.
 */
export class OrchestrationContext {
  readonly instanceId: string
  /** 1 for the first execution, +1 per continue-as-new. */
  readonly executionId: number
  readonly orchestrationName: string
  /** Semantic version of the running registration (`"1.0.0"` for plain registrations). */
  readonly orchestrationVersion: string

  /** Run activity `name`; yields its result, throws an `Error` with its failure message. */
  scheduleActivity<T = any>(name: string, input?: unknown, options?: ActivityOptions): ScheduledTask<T>
  /** Run the activity of a {@link defineActivity} reference: `input` and the result are typed by it. */
  scheduleActivity<R extends ActivityRef>(activity: R, ...inputAndOptions: [...InputArgs<InputOf<R>>, ActivityOptions?]): ScheduledTask<OutputOf<R>>
  /**
   * Run activity `name` on session `sessionId`: every activity of one session runs on the same
   * worker while the session lives (`maxSessionsPerRuntime`, `sessionIdleTimeoutMs`).
   */
  scheduleActivityOnSession<T = any>(name: string, input: unknown, sessionId: string): ScheduledTask<T>
  scheduleActivityOnSession<R extends ActivityRef>(activity: R, input: InputOf<R>, sessionId: string): ScheduledTask<OutputOf<R>>
  /** Run an activity with retries (see {@link RetryPolicy}). */
  scheduleActivityWithRetry<T = any>(name: string, input: unknown, retry: RetryPolicy): ScheduledTask<T>
  scheduleActivityWithRetry<R extends ActivityRef>(activity: R, input: InputOf<R>, retry: RetryPolicy): ScheduledTask<OutputOf<R>>
  /** Retries on a session: every attempt runs on the session's worker. */
  scheduleActivityWithRetryOnSession<T = any>(name: string, input: unknown, retry: RetryPolicy, sessionId: string): ScheduledTask<T>
  scheduleActivityWithRetryOnSession<R extends ActivityRef>(activity: R, input: InputOf<R>, retry: RetryPolicy, sessionId: string): ScheduledTask<OutputOf<R>>
  /** A durable timer; yields `null` after `delayMs` (integer 0 – 3155760000000: up to 100 years). */
  scheduleTimer(delayMs: number): ScheduledTask<null>
  /** Wait for external event `name` (see {@link Client.raiseEvent}); yields its data. */
  waitForEvent<T = any>(name: string): ScheduledTask<T>
  /** Run a child orchestration; yields its output, throws its failure. */
  scheduleSubOrchestration<T = any>(name: string, input?: unknown, options?: SubOrchestrationOptions): ScheduledTask<T>
  /**
   * Run the orchestration of a {@link defineOrchestration} reference as a child (at the
   * reference's version, if it has one): `input` and the output are typed by it.
   */
  scheduleSubOrchestration<R extends OrchestrationRef>(
    orchestration: R,
    ...inputAndOptions: [...InputArgs<InputOf<R>>, SubOrchestrationOptions?]
  ): ScheduledTask<OutputOf<R>>
  /** Same as `scheduleSubOrchestration(name, input, { instanceId })`. */
  scheduleSubOrchestrationWithId<T = any>(name: string, instanceId: string, input?: unknown): ScheduledTask<T>
  scheduleSubOrchestrationWithId<R extends OrchestrationRef>(orchestration: R, instanceId: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<OutputOf<R>>
  /** Same as `scheduleSubOrchestration(name, input, { version })`. */
  scheduleSubOrchestrationVersioned<T = any>(name: string, version: string, input?: unknown): ScheduledTask<T>
  /** A reference's orchestration at `version` (for a versioned reference, its own: `TypeError` otherwise). */
  scheduleSubOrchestrationVersioned<R extends OrchestrationRef>(orchestration: R, version: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<OutputOf<R>>
  /** Same as `scheduleSubOrchestration(name, input, { version, instanceId })`. */
  scheduleSubOrchestrationVersionedWithId<T = any>(name: string, version: string, instanceId: string, input?: unknown): ScheduledTask<T>
  scheduleSubOrchestrationVersionedWithId<R extends OrchestrationRef>(
    orchestration: R,
    version: string,
    instanceId: string,
    ...input: InputArgs<InputOf<R>>
  ): ScheduledTask<OutputOf<R>>
  /**
   * Next message of queue `queueName` (sent with `Client.enqueueEvent`); yields its data.
   * Messages are kept until dequeued, in arrival order (unlike `waitForEvent`).
   */
  dequeueEvent<T = any>(queueName: string): ScheduledTask<T>
  /** Read `key` from another instance's key/value store (recorded); yields the string or `null`. */
  getValueFromInstance(instanceId: string, key: string): ScheduledTask<string | null>
  /**
   * Start orchestration `name` as a new top-level instance without waiting for it (detached);
   * yields `null` at once. `instanceId` must not start with `sub::` or contain `::sub::`.
   * Cannot be used inside `all()`/`race()`.
   */
  startOrchestration(name: string, instanceId: string, input?: unknown): ScheduledTask<null>
  /** Detached start of a {@link defineOrchestration} reference (at its version, if it has one). */
  startOrchestration<R extends OrchestrationRef>(orchestration: R, instanceId: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<null>
  /** Detached start of a given version. */
  startOrchestrationVersioned(name: string, version: string, instanceId: string, input?: unknown): ScheduledTask<null>
  /** Detached start of a {@link defineOrchestration} reference at `version` (for a versioned reference, its own). */
  startOrchestrationVersioned<R extends OrchestrationRef>(orchestration: R, version: string, instanceId: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<null>
  /** A deterministic (recorded) UUID v4 string. */
  newGuid(): ScheduledTask<string>
  /** Deterministic (recorded) wall-clock time, ms since the epoch. */
  utcNow(): ScheduledTask<number>
  /** End this execution and start a new one with `input` (and `version`, default latest). Never resumes. */
  continueAsNew(input?: unknown, version?: string): ScheduledTask<never>
  /** `continueAsNew(input, version)` with the version required. */
  continueAsNewVersioned(input: unknown, version: string): ScheduledTask<never>
  /**
   * Run tasks concurrently; yields one `{ok}` or `{err}` per task, in order. Never throws
   * for task failures. Tasks: activities, retries, timers, events, sub-orchestrations,
   * newGuid, utcNow (no nesting).
   */
  all<Tasks extends ScheduledTask[]>(tasks: [...Tasks]): ScheduledTask<{ [K in keyof Tasks]: JoinResult<ResultOf<Tasks[K]>> }>
  /**
   * First of two or more tasks to finish wins; yields `{ index, value }`. If the winner
   * failed, the yield throws its `Error` (with `index` set). Losers are cancelled.
   * Accepts `race(a, b, c)` or `race([a, b, c])`.
   */
  race<Tasks extends ScheduledTask[]>(...tasks: Tasks): ScheduledTask<RaceResult<ResultOf<Tasks[number]>>>
  race<Tasks extends ScheduledTask[]>(tasks: [...Tasks]): ScheduledTask<RaceResult<ResultOf<Tasks[number]>>>
  /** Set a status string visible to clients (max 256 KiB, no NUL or lone surrogate: RangeError/TypeError at the call; kept across continue-as-new). */
  setCustomStatus(status: string): void
  /** Clear the custom status. */
  resetCustomStatus(): void
  getCustomStatus(): string | null
  /**
   * Durable per-instance key/value (kept across continue-as-new). A value over 64 KiB (UTF-8)
   * or a 151st key throws a `RangeError` here, before duroxide would fail the instance.
   */
  setValue(key: string, value: string): void
  getValue(key: string): string | null
  clearValue(key: string): void
  clearAllValues(): void
  /** Every key/value of this instance. */
  getKvAllValues(): Record<string, string>
  /** The keys, sorted. */
  getKvAllKeys(): string[]
  getKvLength(): number
  /**
   * Clear keys last written before `cutoffMs` (ms since the epoch, integer ≥ 0); returns how many.
   * A replayed `setValue` is stamped again, so this is for keys carried over by continue-as-new.
   */
  pruneKvValuesUpdatedBefore(cutoffMs: number): number

  // duroxide-node's typed variants: same tasks, but a result that is a string holding JSON
  // is decoded once more (for activities returning `JSON.stringify(...)` text). Given a
  // reference, a result typed as a string is therefore typed `Json` (see DecodedAgain).
  scheduleActivityTyped<T = any>(name: string, input?: unknown, options?: ActivityOptions): ScheduledTask<T>
  scheduleActivityTyped<R extends ActivityRef>(activity: R, ...inputAndOptions: [...InputArgs<InputOf<R>>, ActivityOptions?]): ScheduledTask<DecodedAgain<OutputOf<R>>>
  scheduleActivityOnSessionTyped<T = any>(name: string, input: unknown, sessionId: string): ScheduledTask<T>
  scheduleActivityOnSessionTyped<R extends ActivityRef>(activity: R, input: InputOf<R>, sessionId: string): ScheduledTask<DecodedAgain<OutputOf<R>>>
  scheduleActivityWithRetryTyped<T = any>(name: string, input: unknown, retry: RetryPolicy): ScheduledTask<T>
  scheduleActivityWithRetryTyped<R extends ActivityRef>(activity: R, input: InputOf<R>, retry: RetryPolicy): ScheduledTask<DecodedAgain<OutputOf<R>>>
  scheduleActivityWithRetryOnSessionTyped<T = any>(name: string, input: unknown, retry: RetryPolicy, sessionId: string): ScheduledTask<T>
  scheduleActivityWithRetryOnSessionTyped<R extends ActivityRef>(
    activity: R,
    input: InputOf<R>,
    retry: RetryPolicy,
    sessionId: string,
  ): ScheduledTask<DecodedAgain<OutputOf<R>>>
  scheduleSubOrchestrationTyped<T = any>(name: string, input?: unknown, options?: SubOrchestrationOptions): ScheduledTask<T>
  scheduleSubOrchestrationTyped<R extends OrchestrationRef>(
    orchestration: R,
    ...inputAndOptions: [...InputArgs<InputOf<R>>, SubOrchestrationOptions?]
  ): ScheduledTask<DecodedAgain<OutputOf<R>>>
  scheduleSubOrchestrationWithIdTyped<T = any>(name: string, instanceId: string, input?: unknown): ScheduledTask<T>
  scheduleSubOrchestrationWithIdTyped<R extends OrchestrationRef>(orchestration: R, instanceId: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<DecodedAgain<OutputOf<R>>>
  waitForEventTyped<T = any>(name: string): ScheduledTask<T>
  dequeueEventTyped<T = any>(queueName: string): ScheduledTask<T>
  /** {@link all} with each `ok` (and each failure message) decoded once more. */
  allTyped<Tasks extends ScheduledTask[]>(tasks: [...Tasks]): ScheduledTask<{ [K in keyof Tasks]: { ok: DecodedAgain<ResultOf<Tasks[K]>> } | { err: Json } }>
  /** {@link race} with the winner's value decoded once more. */
  raceTyped<Tasks extends ScheduledTask[]>(...tasks: Tasks): ScheduledTask<RaceResult<DecodedAgain<ResultOf<Tasks[number]>>>>
  raceTyped<Tasks extends ScheduledTask[]>(tasks: [...Tasks]): ScheduledTask<RaceResult<DecodedAgain<ResultOf<Tasks[number]>>>>
  /** Aliases (no second decode). */
  startOrchestrationTyped(name: string, instanceId: string, input?: unknown): ScheduledTask<null>
  startOrchestrationTyped<R extends OrchestrationRef>(orchestration: R, instanceId: string, ...input: InputArgs<InputOf<R>>): ScheduledTask<null>
  startOrchestrationVersionedTyped(name: string, version: string, instanceId: string, input?: unknown): ScheduledTask<null>
  startOrchestrationVersionedTyped<R extends OrchestrationRef>(
    orchestration: R,
    version: string,
    instanceId: string,
    ...input: InputArgs<InputOf<R>>
  ): ScheduledTask<null>
  continueAsNewTyped(input?: unknown, version?: string): ScheduledTask<never>
  /** Whether this point of the generator is being replayed from history. */
  isReplaying(): boolean
  /** Log through duroxide's tracing (target `duroxide::orchestration`), suppressed during replay. */
  traceInfo(message: string): void
  traceWarn(message: string): void
  traceError(message: string): void
  traceDebug(message: string): void
}

// ---------------------------------------------------------------------------------------
// Activities
// ---------------------------------------------------------------------------------------

/** What an activity function receives. Methods are valid until the activity returns. */
export class ActivityContext {
  readonly instanceId: string
  readonly executionId: number
  readonly orchestrationName: string
  readonly orchestrationVersion: string
  readonly activityName: string
  readonly workerId: string
  readonly sessionId: string | null
  /**
   * Aborts when duroxide cancels the activity: the orchestration no longer needs the result
   * (it finished, or the activity lost a race), or the activity's lease was lost (a refused
   * renewal, a stalled event loop). `signal.reason` is an `AbortError` with code
   * `ERR_STEADFAST_ACTIVITY_CANCELLED`. Pass it to `fetch`, timers and streams so they stop;
   * the activity still has `activityCancellationGracePeriodMs` to return. Detected at the
   * next worker-lock renewal, like `isCancelled()`.
   */
  readonly signal: AbortSignal
  /** The activity's worker tag (`withTag` / `{ tag }`), or null. */
  tag(): string | null
  /** Log through duroxide's tracing (target `duroxide::activity`). Ignored after the activity returned. */
  traceInfo(message: string): void
  traceWarn(message: string): void
  traceError(message: string): void
  traceDebug(message: string): void
  /**
   * True once the orchestration no longer needs the result (it finished, or the activity lost
   * a race). Detected at the next worker-lock renewal, so latency depends on `workerLockTimeoutMs`.
   */
  isCancelled(): boolean
  /** A client on the runtime's provider. */
  getClient(): Client
}

export type ActivityFunction<I = any, O = any> = (ctx: ActivityContext, input: I) => O | Promise<O>
export type OrchestrationFunction<I = any, O = any> = (ctx: OrchestrationContext, input: I) => Generator<ScheduledTask, O, any>

// ---------------------------------------------------------------------------------------
// Typed references
// ---------------------------------------------------------------------------------------

/**
 * An activity bound to its name ({@link defineActivity}). Register it with
 * `runtime.registerActivity(ref)`; pass it where the activity's name goes
 * (`ctx.scheduleActivity(ref, input)`) and the input and result are typed by `I` and `O`.
 */
export interface ActivityRef<I = any, O = any> {
  readonly kind: 'activity'
  readonly name: string
  readonly fn: ActivityFunction<I, O>
}

/**
 * An orchestration bound to its name ({@link defineOrchestration}), and to one version
 * ({@link defineOrchestrationVersioned}). Register it with `runtime.registerOrchestration(ref)`;
 * pass it where the orchestration's name goes (`client.startOrchestration(id, ref, input)`,
 * `ctx.scheduleSubOrchestration(ref, input)`) and the input and output are typed by `I` and `O`.
 */
export interface OrchestrationRef<I = any, O = any> {
  readonly kind: 'orchestration'
  readonly name: string
  /**
   * The version it registers as and runs. Absent: it registers as `1.0.0` and, like a name,
   * starts the latest registered version.
   */
  readonly version?: string
  readonly fn: OrchestrationFunction<I, O>
}

/** An orchestration reference pinned to one version ({@link defineOrchestrationVersioned}). */
export interface VersionedOrchestrationRef<I = any, O = any> extends OrchestrationRef<I, O> {
  readonly version: string
}

/**
 * What a `*Typed` task of result type `O` yields: its result decoded once more when it is a
 * string holding JSON, so a string result may arrive as any JSON value; others are unchanged.
 */
export type DecodedAgain<O> = O extends string ? Json : O

/** The input type of a reference. */
export type InputOf<Ref> = Ref extends ActivityRef<infer I, any> ? I : Ref extends OrchestrationRef<infer I, any> ? I : never
/** The result type of a reference (an activity's resolved return value, an orchestration's output). */
export type OutputOf<Ref> = Ref extends ActivityRef<any, infer O> ? O : Ref extends OrchestrationRef<any, infer O> ? O : never
/** The input argument of a call: optional when the input type admits `undefined` (sent as `null`). */
export type InputArgs<I> = undefined extends I ? [input?: I] : [input: I]

/**
 * An activity reference: `name` (1–1024 UTF-8 bytes, no NUL) bound to `fn`. A frozen object;
 * throws TypeError/RangeError naming the argument.
 */
export function defineActivity<I = any, O = any>(name: string, fn: ActivityFunction<I, O>): ActivityRef<I, O>
/** An orchestration reference: `name` bound to the generator function `fn`, without a version. */
export function defineOrchestration<I = any, O = any>(name: string, fn: OrchestrationFunction<I, O>): OrchestrationRef<I, O>
/** An orchestration reference pinned to `version` (a semantic version like `"2.0.0"`). */
export function defineOrchestrationVersioned<I = any, O = any>(name: string, version: string, fn: OrchestrationFunction<I, O>): VersionedOrchestrationRef<I, O>

// ---------------------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------------------

/** Which activities this runtime's workers run. */
export type TagFilter = 'defaultOnly' | 'any' | 'none' | { tags: string[] } | { defaultAnd: string[] }

/**
 * Runtime options. All optional; integers unless noted; durations in milliseconds. Validated
 * in JS before anything starts: a wrong type or unknown key is a `TypeError` (unknown keys
 * suggest the closest known one), a value out of range a `RangeError`, each naming the field
 * and the rule.
 */
export interface RuntimeOptions {
  /** Concurrent orchestration turns, 0–1024 (0 = no orchestration dispatcher). Default 2. */
  orchestrationConcurrency?: number
  /** Concurrent activities, 0–1024 (0 = no worker). Default 2. */
  workerConcurrency?: number
  /** Minimum idle polling cycle, 0–60000. Default 100. */
  dispatcherPollIntervalMs?: number
  /** Longest wait inside a long-polling provider per fetch, 0–3600000. Default 30000. */
  dispatcherLongPollTimeoutMs?: number
  /** Lock on a fetched orchestration turn, 1–86400000. Default 5000. */
  orchestratorLockTimeoutMs?: number
  /** Renew at timeout − buffer when the timeout is ≥ 15 s (else at half the timeout), 0–86400000. Default 2000. */
  orchestratorLockRenewalBufferMs?: number
  /** Lock on a fetched activity; also bounds cancellation-detection latency, 1–86400000. Default 30000. */
  workerLockTimeoutMs?: number
  /** As `orchestratorLockRenewalBufferMs`, for activities, 0–86400000. Default 5000. */
  workerLockRenewalBufferMs?: number
  /**
   * A message fetched more than this many times is failed as poison, 1–1000000. Default 10.
   * With a PostgresProvider this is also steadfast-pg's attempt ceiling (`claim.max_attempts`).
   */
  maxAttempts?: number
  /** First backoff for work whose handler is not registered here, 0–86400000; ≤ `unregisteredBackoffMaxMs`. Default 1000. */
  unregisteredBackoffBaseMs?: number
  /** Cap of that backoff, 0–86400000. Default 60000. */
  unregisteredBackoffMaxMs?: number
  /** Wait before aborting a cancelled activity, 0–86400000. Default 10000. */
  activityCancellationGracePeriodMs?: number
  /** Session heartbeat lease, 1–86400000. Default 30000. */
  sessionLockTimeoutMs?: number
  /** Session renewal buffer, 0–86400000. Default 5000. */
  sessionLockRenewalBufferMs?: number
  /**
   * How long an idle session stays pinned, 1–86400000. Must exceed
   * `workerLockTimeoutMs − workerLockRenewalBufferMs` (1000 when negative). Default 300000.
   */
  sessionIdleTimeoutMs?: number
  /** Orphaned-session sweep interval, 1–86400000. Default 300000. */
  sessionCleanupIntervalMs?: number
  /** Distinct sessions owned at once, 0–100000. Default 10. */
  maxSessionsPerRuntime?: number
  /** Stable worker identity for session ownership (1–256 bytes). Default: per-slot ephemeral ids. */
  workerNodeId?: string
  /** Activity routing (max 5 tags of 1–256 bytes). Default `'defaultOnly'` (untagged activities). */
  workerTagFilter?: TagFilter
  /**
   * Format of the stdout log when no `logger` is given. Default `'pretty'`. ANSI colours only
   * when stdout is a terminal. The first runtime started in a process sets the process's log
   * output; later runtimes' log settings are ignored.
   */
  logFormat?: 'json' | 'pretty' | 'compact'
  /**
   * Level for duroxide's orchestration/activity logs; other targets log at `warn`. `RUST_LOG`,
   * when set, replaces the whole filter. Default `'info'`.
   */
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off'
  /**
   * Level per target, as `tracing` filter directives (1–4096 bytes), e.g.
   * `'warn,steadfast_pg=info,duroxide::orchestration=debug'`; replaces the filter `logLevel`
   * makes. `RUST_LOG`, when set, wins. Default: `warn`, and `logLevel` for orchestration and activity traces.
   */
  logFilter?: string
  /**
   * Receives the process's log records (duroxide's and steadfast-pg's) instead of stdout:
   * `logger[level]({ target, ...fields }, message)`, as pino takes them. Process-wide: give
   * it to the first runtime that starts (`start()` rejects with `ERR_STEADFAST_INVALID_STATE`
   * if stdout or `initTracing` was chosen before); a later runtime's logger replaces it.
   * Default: stdout.
   */
  logger?: Logger
  /** Service name in logs and metrics (1–256 bytes). Default `'duroxide'`. */
  serviceName?: string
  /** Service version in logs and metrics (1–256 bytes). Default: none. */
  serviceVersion?: string
  /** Gauge refresh interval, 1–86400000. Default 60000. */
  gaugePollIntervalMs?: number
  /**
   * Both providers: when the event loop has not answered for this long (a busy loop or a
   * synchronous call that hangs, in orchestration or activity code), this process refuses to
   * renew its leases and to fetch work, so its leases lapse and other processes take the work
   * over with the attempt counted; `eventLoopStalled` reports the stall once the loop answers
   * again. A turn whose synchronous JS (its replay included) runs longer than this loses its lease
   * the same way: raise it for orchestrations whose replay takes seconds. A retried turn (one an
   * earlier claim did not settle) runs each synchronous step of orchestration code under a
   * deadline of half this: a step that runs longer (an endless loop) is interrupted and the
   * orchestration fails, so such code hangs only the process that ran its first attempt.
   * 0 (off, the deadline too) or 100–86400000.
   * Default 10000.
   */
  eventLoopStallMs?: number

  // steadfast-pg claim options: applied to the runtime's own PostgreSQL pool; ignored for SQLite.

  /** Claim draws from the oldest `fetchFanout` eligible instances (1 = strict FIFO), 1–1024. Default 8. */
  fetchFanout?: number
  /** Counted candidate tries per fetch (a try that finds nothing to run is not counted), 1–1024. Default 8. */
  maxClaimAttempts?: number
  /** Time per fetch spent trying candidates, 1–60000. Default 2000. */
  maxClaimDurationMs?: number
  /** Redelivery backoff after an expired lease: min(cap, base·2^(attempt−1))·(1 + jitter·u). Base 0–3600000, ≤ cap. Default 20. */
  redeliveryBackoffBaseMs?: number
  /** Redelivery backoff cap, 0–3600000. Default 30000. */
  redeliveryBackoffCapMs?: number
  /** Redelivery jitter, a number 0–1. Default 0.2. */
  redeliveryBackoffJitter?: number
  /** Longest sleep of a waiting fetch between checks (in `sessionFree` mode it bounds how long other processes' work waits, and how often `waitForOrchestration` reads the status for an end committed by another process), 10–60000. Default 250. */
  longPollRecheckMs?: number
  /**
   * How long a message to an instance that nothing has started (a mistyped id, an event raised
   * before its start, a completion for a deleted instance) waits for that start, from when it
   * became visible, 1–2592000000 (30 days). Such messages never hold up other work; past this they
   * move to the dead-letter store with reason `orphaned` and a `messagesOrphaned` event. Default 300000.
   */
  orphanTimeoutMs?: number
  /**
   * PostgreSQL: the longest one orchestration turn may hold its instance, 100–86400000 ms. Lease
   * renewals stop this long after the claim, so a turn that never ends (a generator that loops, or
   * orchestration code that blocks the event loop while Rust keeps renewing) loses its lease; the
   * instance is redelivered with the attempt counted and ends poisoned at `maxAttempts`. Default 300000.
   */
  maxTurnDurationMs?: number
  /**
   * PostgreSQL: the same for one activity execution, 100–604800000 ms (7 days). An activity still
   * running then loses its lease and is redelivered with the attempt counted. Default 3600000.
   */
  maxActivityDurationMs?: number
  /**
   * PostgreSQL: the most orchestrator messages one turn is handed, 1–1000000 (its oldest ones; the
   * rest follow in the next turns; an instance's start is always in its first). Default 1000.
   */
  maxBatchMessages?: number
  /**
   * PostgreSQL: the most history events of one execution a claim loads, 1–100000000. An instance
   * over it is not run: its execution fails (non-retryable, naming this option), its messages move
   * to the dead-letter store with reason `history_too_large`, and a `historyTooLarge` event fires.
   * Default 50000.
   */
  maxHistoryEvents?: number
  /**
   * PostgreSQL: the same for the history's stored size in bytes (as PostgreSQL stores it, possibly
   * compressed), 1024–1073741824. Default 52428800 (50 MiB).
   */
  maxHistoryBytes?: number
}

/** What the `logger` runtime option needs: pino, bunyan-style or console-like loggers fit. */
export interface Logger {
  debug(fields: LogFields, message: string): void
  info(fields: LogFields, message: string): void
  warn(fields: LogFields, message: string): void
  error(fields: LogFields, message: string): void
  /** Used for `trace` records when present; else they go to `debug`. */
  trace?(fields: LogFields, message: string): void
}

/** The structured part of a log record: where it comes from and the record's own fields. */
export interface LogFields {
  /** The Rust module that logged, e.g. `'steadfast_pg'`, `'duroxide::orchestration'`. */
  target: string
  /** e.g. `event: 'steadfast.poison_committed'`, `instance_id`, `attempt_count`. */
  [field: string]: string | number | boolean | undefined
}

/** The last argument of {@link Client.startOrchestration} and {@link Client.startOrchestrationVersioned}. Unknown keys are rejected (`TypeError`). */
export interface StartOptions {
  /**
   * What a start of an id that exists does. `'ignore'`: nothing (the runtime drops the extra
   * start). `'throw'`: reject with `ERR_STEADFAST_INSTANCE_EXISTS`; on PostgreSQL the check and
   * the start are one atomic step (of concurrent starts of one id exactly one succeeds), on
   * SQLite two (a status read, then the start: an id counts once its first turn ran, and
   * concurrent starts may both succeed). Default `'ignore'`.
   */
  ifExists?: 'ignore' | 'throw'
}

/** Options of {@link Runtime.serveMetrics}. Unknown keys are rejected (`TypeError`). */
export interface MetricsServerOptions {
  /** TCP port, 0–65535 (0: any free port). Default `9464`. */
  port?: number
  /** Address to listen on, 1–253 bytes. Default `'127.0.0.1'`. */
  host?: string
  /** The one path answered, 1–1024 bytes, starting with `/`. Default `'/metrics'`. */
  path?: string
}

/** A listener started by {@link Runtime.serveMetrics}. */
export interface MetricsServer {
  /** Where to scrape, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string
  /** The port bound (the one chosen when `port` was 0). */
  readonly port: number
  /** Stop listening; resolves when closed. */
  close(): Promise<void>
}

/** Counters since start. */
export interface MetricsSnapshot {
  orchStarts: number
  orchCompletions: number
  orchFailures: number
  orchApplicationErrors: number
  orchInfrastructureErrors: number
  orchConfigurationErrors: number
  orchPoison: number
  activitySuccess: number
  activityAppErrors: number
  activityInfraErrors: number
  activityConfigErrors: number
  activityPoison: number
  orchDispatcherItemsFetched: number
  workerDispatcherItemsFetched: number
  orchContinueAsNew: number
  suborchestrationCalls: number
  providerErrors: number
}

/** Fields common to every diagnostic. Fields that do not apply are absent or null. */
interface DiagnosticBase {
  /** `orchestrator` or `worker`. */
  queue: 'orchestrator' | 'worker'
  instanceId?: string | null
  executionId?: number | null
  attemptCount?: number | null
  maxAttempts?: number | null
  /** e.g. `activity:Charge`, `orchestration`, or steadfast-pg's work-item kinds. */
  messageKind?: string | null
  reason: string
  /** Wall-clock ms since the epoch when it was raised. */
  at: number
  /** `provider` (steadfast-pg) or `runtime` (the binding's SQLite provider wrapper). */
  source: 'provider' | 'runtime'
}

/**
 * A diagnostic, discriminated on `kind`:
 * - `poisoned`: a poison disposition committed (PostgreSQL: with a live lease).
 * - `poisonCommittedWithoutLease`: (PostgreSQL) committed although its lease had expired — the case upstream providers lose.
 * - `poisonLost`: a poison disposition could not be committed; `reason` says why.
 * - `attemptCeilingEnforced`: (PostgreSQL) the claim stopped a message past `maxAttempts + 1` and dead-lettered it.
 * - `historyTooLarge`: (PostgreSQL) the claim stopped an instance whose history is over `maxHistoryEvents` or
 *   `maxHistoryBytes`: it failed the execution and dead-lettered its messages with reason `history_too_large`.
 * - `ackRejected`: (PostgreSQL) an ordinary ack was refused because its lock token is dead.
 * - `claimExhausted`: (PostgreSQL) a fetch used up its tries or time.
 * - `messagesOrphaned`: (PostgreSQL) messages to an instance that nothing started waited `orphanTimeoutMs`
 *   and were moved to the dead-letter store with reason `orphaned` (one event per instance).
 * - `diagnosticsLagged`: diagnostics were dropped because listeners fell behind.
 * - `eventLoopStalled`: the event loop did not answer for `eventLoopStallMs` or longer, and this
 *   process refused lease renewals and fetches meanwhile (see {@link EventLoopStalled}).
 */
export type Diagnostic =
  | (DiagnosticBase & { kind: 'poisoned' })
  | (DiagnosticBase & { kind: 'poisonCommittedWithoutLease' })
  | (DiagnosticBase & { kind: 'poisonLost' })
  | (DiagnosticBase & { kind: 'attemptCeilingEnforced' })
  | (DiagnosticBase & { kind: 'historyTooLarge' })
  | (DiagnosticBase & { kind: 'ackRejected' })
  | (DiagnosticBase & { kind: 'claimExhausted' })
  | (DiagnosticBase & { kind: 'messagesOrphaned' })
  | (DiagnosticBase & { kind: 'diagnosticsLagged' })
  | EventLoopStalled

/** Reported once the event loop answers again after a stall that refused work. */
export interface EventLoopStalled {
  kind: 'eventLoopStalled'
  /** How long the event loop did not answer, ms. */
  stalledMs: number
  /** The `eventLoopStallMs` in force. */
  thresholdMs: number
  /** Lease renewals refused (orchestration, activity and session leases). */
  renewalsRefused: number
  /** Fetches that came back empty instead of claiming work. */
  fetchesRefused: number
  /** Acks of activities given up during the stall, refused so that their work is redelivered. */
  acksRefused: number
  reason: string
  /** Wall-clock ms since the epoch when it was reported. */
  at: number
  source: 'runtime'
}

export type DiagnosticKind = Diagnostic['kind']

/**
 * Runs registered orchestrations and activities. An EventEmitter: every diagnostic is emitted
 * under its `kind` and again as `diagnostic`. A listener that throws or rejects never crashes
 * the process; it produces a process warning with code `STEADFAST_LISTENER_ERROR`.
 *
 * Register everything, then `start()`. A started runtime keeps the process alive until
 * `shutdown()`.
 */
/** Fields every lifecycle event has. */
export interface LifecycleEventBase {
  instanceId: string
  executionId: number
  /** Wall-clock ms since the epoch at which the commit was seen. */
  at: number
}

/** An execution started (its first turn committed); for a sub-orchestration, with its parent. */
export interface OrchestrationStartedEvent extends LifecycleEventBase {
  kind: 'orchestrationStarted'
  name: string
  version: string
  parentInstanceId?: string
}

/** An execution completed. */
export interface OrchestrationCompletedEvent extends LifecycleEventBase {
  kind: 'orchestrationCompleted'
}

/** An execution failed (poison included). */
export interface OrchestrationFailedEvent extends LifecycleEventBase {
  kind: 'orchestrationFailed'
  /** The failure's message. */
  error: string
  errorCategory: 'application' | 'infrastructure' | 'configuration' | 'poison'
}

/** An execution continued as new; the next one announces its own start. */
export interface OrchestrationContinuedAsNewEvent extends LifecycleEventBase {
  kind: 'orchestrationContinuedAsNew'
}

/** An activity's failure was committed (a thrown error, a timeout, poison). */
export interface ActivityFailedEvent extends LifecycleEventBase {
  kind: 'activityFailed'
  /** The activity's id within its execution. */
  activityId: number
  /** The activity's name, when it was handed out while a lifecycle listener was registered. */
  name?: string
  error: string
  errorCategory: 'application' | 'infrastructure' | 'configuration' | 'poison'
}

/** Every lifecycle event; `kind` discriminates. */
export type LifecycleEvent =
  | OrchestrationStartedEvent
  | OrchestrationCompletedEvent
  | OrchestrationFailedEvent
  | OrchestrationContinuedAsNewEvent
  | ActivityFailedEvent

export type LifecycleEventKind = LifecycleEvent['kind']

/**
 * The events a {@link Runtime} emits, as `EventEmitter<RuntimeEvents>` types them: every
 * diagnostic under its `kind` and again as `diagnostic`; every lifecycle event under its
 * `kind` only.
 */
export type RuntimeEvents = { diagnostic: [Diagnostic] } & { [K in DiagnosticKind]: [Extract<Diagnostic, { kind: K }>] } & {
  [K in LifecycleEventKind]: [Extract<LifecycleEvent, { kind: K }>]
}

export class Runtime extends EventEmitter<RuntimeEvents> {
  /** @param options see {@link RuntimeOptions}; validated here (throws TypeError / RangeError). */
  constructor(provider: Provider, options?: RuntimeOptions)
  /**
   * Register an activity. Its return value is `JSON.stringify`'d. A throw fails the activity;
   * an `Error` reaches the orchestration's `yield` with its class or name, message, `code`,
   * stack and own enumerable fields.
   */
  registerActivity<I = any, O = any>(name: string, fn: ActivityFunction<I, O>): this
  /** Register the function of a {@link defineActivity} reference under its name. */
  registerActivity(activity: ActivityRef): this
  /** Register a generator function as version `1.0.0` of `name`. */
  registerOrchestration<I = any, O = any>(name: string, fn: OrchestrationFunction<I, O>): this
  /** Register the function of a {@link defineOrchestration} reference: at its version, else `1.0.0`. */
  registerOrchestration(orchestration: OrchestrationRef): this
  /**
   * Register a version (semver, e.g. `"2.1.0"`) of `name`. Versions may be registered in any
   * order; new instances and continue-as-new use the highest. Invalid or duplicate versions
   * throw here.
   */
  registerOrchestrationVersioned<I = any, O = any>(name: string, version: string, fn: OrchestrationFunction<I, O>): this
  /**
   * Register the function of a {@link defineOrchestration} reference as `version`; for a
   * versioned reference `version` must be its own (`TypeError` otherwise).
   */
  registerOrchestrationVersioned(orchestration: OrchestrationRef, version: string): this
  /** Register a {@link defineOrchestrationVersioned} reference at its version. */
  registerOrchestrationVersioned(orchestration: VersionedOrchestrationRef): this
  /** duroxide-node's name for {@link Runtime.registerActivity} (results are JSON-encoded either way). */
  registerActivityTyped<I = any, O = any>(name: string, fn: ActivityFunction<I, O>): this
  registerActivityTyped(activity: ActivityRef): this
  /** duroxide-node's name for {@link Runtime.registerOrchestration}. */
  registerOrchestrationTyped<I = any, O = any>(name: string, fn: OrchestrationFunction<I, O>): this
  registerOrchestrationTyped(orchestration: OrchestrationRef): this
  /** duroxide-node's name for {@link Runtime.registerOrchestrationVersioned}. */
  registerOrchestrationVersionedTyped<I = any, O = any>(name: string, version: string, fn: OrchestrationFunction<I, O>): this
  registerOrchestrationVersionedTyped(orchestration: OrchestrationRef, version: string): this
  registerOrchestrationVersionedTyped(orchestration: VersionedOrchestrationRef): this
  /**
   * Start the dispatchers; resolves once they run. Rejects (never panics) with a
   * `SteadfastError`: `ERR_STEADFAST_INVALID_STATE` when already started or shut down,
   * `ERR_STEADFAST_REGISTRATION`, `ERR_STEADFAST_PROVIDER_OPEN` (PostgreSQL runtime pool).
   */
  start(): Promise<void>
  /** Stop; in-flight work gets `timeoutMs` (default 1000) before it is aborted. No-op when not running. */
  shutdown(timeoutMs?: number): Promise<void>
  /** Counters since start, or `null` when not running. */
  metricsSnapshot(): MetricsSnapshot | null
  /**
   * The process's metrics, duroxide's and the provider's, in the Prometheus text exposition
   * format (0.0.4). With PostgreSQL the queue gauges are read from the database first (two
   * statements that count the queues: scrape every few seconds, not in a loop). The recorder
   * is process-wide: every runtime of the process records into it. See docs/metrics.md.
   * @throws SteadfastError `ERR_STEADFAST_PROVIDER` when the gauges cannot be read.
   */
  metrics(): Promise<string>
  /**
   * Serve {@link Runtime.metrics} over HTTP for a Prometheus scraper, until `close()` or
   * {@link Runtime.shutdown}. Unauthenticated: bind to a private address.
   * @throws TypeError / RangeError for malformed options (naming the field); the listen
   *   error (e.g. `EADDRINUSE`) when the port cannot be bound.
   */
  serveMetrics(options?: MetricsServerOptions): Promise<MetricsServer>

}

// ---------------------------------------------------------------------------------------
// Tracing
// ---------------------------------------------------------------------------------------

/** Options of {@link initTracing}. Unknown keys are rejected (`TypeError`). */
export interface TracingOptions {
  /** File to append to, created if missing (1–4096 bytes, no NUL). */
  logFile: string
  /** Level of orchestration and activity traces; other targets log warnings and up. Default `"info"`. `RUST_LOG`, when set, wins. */
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'off'
  /** Default `"compact"`. */
  logFormat?: 'json' | 'pretty' | 'compact'
}

/**
 * Send the process's tracing output (orchestration and activity traces, runtime and
 * provider logs) to a file instead of stdout. Process-wide and once only: call it before
 * the first `Runtime.start()`, which otherwise installs duroxide's stdout logger (a
 * runtime's `logLevel`/`logFormat` are then ignored).
 * @throws TypeError / RangeError for malformed options (naming the field).
 * @throws SteadfastError `ERR_STEADFAST_INVALID_STATE` when tracing is already initialized;
 *   `ERR_STEADFAST_INVALID_ARGUMENT` when the file cannot be opened.
 */
export function initTracing(options: TracingOptions): void
