'use strict'

// Every options object the library takes, as data: per option its kind, bounds and default.
// lib/options.js applies these tables; docs/node-api.md and lib/index.d.ts describe them, and
// __test__/options-table.test.mjs checks that both say what the tables say.
//
// A rule: `kind` (see checkField in options.js), its bounds (`min`/`max`, `maxBytes`,
// `values`), and one of `default` (the value used when the option is omitted),
// `defaultText` (what happens then, in words) or `required`. Defaults of options passed on
// to duroxide / steadfast-pg are theirs; here they are documentation, and the base of the
// cross-field rules (`atMost`: at most that other option's effective value).

const { MAX_WORKER_TAGS, MAX_TAG_NAME_BYTES } = require('./limits')
const { MAX_NAME_BYTES } = require('./args')

const DAY_MS = 86_400_000
/** Largest timeout or interval in ms (the native layer takes a u32). */
const MAX_TIMEOUT_MS = 0xffff_ffff
/** Longest instance id, in UTF-8 bytes (child ids are `<parent>::sub::<n>`, so keep headroom). */
const MAX_INSTANCE_ID_BYTES = 1024
/** Longest file path (SQLite database, log file), in UTF-8 bytes: Linux's PATH_MAX. */
const MAX_PATH_BYTES = 4096
/** Longest host name (DNS). */
const MAX_HOST_BYTES = 253
/** Longest database or role name PostgreSQL keeps (NAMEDATALEN - 1); Entra principal names fit. */
const MAX_IDENTIFIER_BYTES = 63
/** Most instance ids in one bulk filter, and its largest `limit`. */
const MAX_BULK_INSTANCES = 10_000
/** Largest page of dead letters. */
const MAX_DEAD_LETTER_PAGE = 10_000
/** The latest time a JS Date can hold, ms since the epoch. */
const MAX_DATE_MS = 8_640_000_000_000_000

const LOG_FORMATS = ['json', 'pretty', 'compact']
const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace', 'off']
/** The string forms of `workerTagFilter`; the object forms are `{ tags }` and `{ defaultAnd }`. */
const TAG_FILTER_MODES = ['defaultOnly', 'any', 'none']

const int = (min, max, more) => ({ kind: 'int', min, max, ...more })

/** `new Runtime(provider, options)`. */
const RUNTIME_FIELDS = {
  orchestrationConcurrency: int(0, 1024, { default: 2 }),
  workerConcurrency: int(0, 1024, { default: 2 }),
  dispatcherPollIntervalMs: int(0, 60_000, { default: 100 }),
  dispatcherLongPollTimeoutMs: int(0, 3_600_000, { default: 30_000 }),
  orchestratorLockTimeoutMs: int(1, DAY_MS, { default: 5_000 }),
  orchestratorLockRenewalBufferMs: int(0, DAY_MS, { default: 2_000 }),
  workerLockTimeoutMs: int(1, DAY_MS, { default: 30_000 }),
  workerLockRenewalBufferMs: int(0, DAY_MS, { default: 5_000 }),
  maxAttempts: int(1, 1_000_000, { default: 10 }),
  unregisteredBackoffBaseMs: int(0, DAY_MS, { default: 1_000, atMost: 'unregisteredBackoffMaxMs' }),
  unregisteredBackoffMaxMs: int(0, DAY_MS, { default: 60_000 }),
  activityCancellationGracePeriodMs: int(0, DAY_MS, { default: 10_000 }),
  sessionLockTimeoutMs: int(1, DAY_MS, { default: 30_000 }),
  sessionLockRenewalBufferMs: int(0, DAY_MS, { default: 5_000 }),
  sessionIdleTimeoutMs: int(1, DAY_MS, { default: 300_000 }),
  sessionCleanupIntervalMs: int(1, DAY_MS, { default: 300_000 }),
  maxSessionsPerRuntime: int(0, 100_000, { default: 10 }),
  workerNodeId: { kind: 'string', maxBytes: 256, defaultText: 'per-slot ids' },
  workerTagFilter: { kind: 'tagFilter', default: 'defaultOnly' },
  logFormat: { kind: 'enum', values: LOG_FORMATS, default: 'pretty' },
  logLevel: { kind: 'enum', values: LOG_LEVELS, default: 'info' },
  logFilter: { kind: 'string', maxBytes: 4096, defaultText: '`warn`, and `logLevel` for orchestration and activity traces' },
  logger: { kind: 'logger', defaultText: 'stdout' },
  serviceName: { kind: 'string', maxBytes: 256, default: 'duroxide' },
  serviceVersion: { kind: 'string', maxBytes: 256, defaultText: 'none' },
  gaugePollIntervalMs: int(1, DAY_MS, { default: 60_000 }),
  // The event-loop watch (both providers). Below 100 ms an ordinary busy moment would count as
  // a stall, so 0 (off) or at least that.
  eventLoopStallMs: int(0, DAY_MS, { default: 10_000, offOrAtLeast: 100 }),
  // steadfast-pg claim options (PostgreSQL only; ignored for SQLite)
  fetchFanout: int(1, 1024, { default: 8 }),
  maxClaimAttempts: int(1, 1024, { default: 8 }),
  maxClaimDurationMs: int(1, 60_000, { default: 2_000 }),
  redeliveryBackoffBaseMs: int(0, 3_600_000, { default: 20, atMost: 'redeliveryBackoffCapMs' }),
  redeliveryBackoffCapMs: int(0, 3_600_000, { default: 30_000 }),
  redeliveryBackoffJitter: { kind: 'number', min: 0, max: 1, default: 0.2 },
  longPollRecheckMs: int(10, 60_000, { default: 250 }),
  orphanTimeoutMs: int(1, 30 * DAY_MS, { default: 300_000 }),
  maxTurnDurationMs: int(100, DAY_MS, { default: 300_000 }),
  maxActivityDurationMs: int(100, 7 * DAY_MS, { default: 3_600_000 }),
  maxBatchMessages: int(1, 1_000_000, { default: 1000 }),
  maxHistoryEvents: int(1, 100_000_000, { default: 50_000 }),
  maxHistoryBytes: int(1024, 1_073_741_824, { default: 52_428_800 }),
}

/** `PostgresProvider.connectWithOptions(options)`. */
const POSTGRES_FIELDS = {
  url: { kind: 'url', required: true },
  schema: { kind: 'schema', default: 'steadfast' },
  maxConnections: int(2, 1000, { default: 10 }),
  acquireTimeoutMs: int(1, 600_000, { default: 10_000 }),
  statementLockTimeoutMs: int(1, 600_000, { default: 2_000 }),
  statementTimeoutMs: int(1, 3_600_000, { default: 60_000 }),
  polling: { kind: 'enum', values: ['listen', 'sessionFree'], default: 'listen' },
  runMigrations: { kind: 'boolean', default: true },
}

/** `PostgresProvider.connectWithEntra(…, options)` and `connectWithSchemaAndEntra(…, options)`. */
const ENTRA_FIELDS = {
  audience: { kind: 'string', maxBytes: 1024, default: 'https://ossrdbms-aad.database.windows.net/.default' },
  maxConnections: int(2, 1000, { default: 10 }),
  acquireTimeoutMs: int(1, 600_000, { default: 30_000 }),
  refreshIntervalMs: int(1_000, DAY_MS, { default: 1_200_000 }),
  sslMode: { kind: 'enum', values: ['verify-full', 'verify-ca', 'require'], default: 'verify-full' },
  getToken: { kind: 'tokenSource', defaultText: 'workload identity, then managed identity, then the Azure CLI' },
}

const INSTANCE_ID = { kind: 'string', maxBytes: MAX_INSTANCE_ID_BYTES }
const EPOCH_MS = int(0, Number.MAX_SAFE_INTEGER, { defaultText: 'any time' })

/** `Client.listDeadLetters(options)`. */
const DEAD_LETTER_LIST_FIELDS = {
  instanceId: { ...INSTANCE_ID, defaultText: 'all instances' },
  afterId: int(0, Number.MAX_SAFE_INTEGER, { default: 0 }),
  limit: int(1, MAX_DEAD_LETTER_PAGE, { default: 100 }),
}

/** Most instances one `Client.listInstances` page holds (steadfast-pg's MAX_INSTANCE_PAGE). */
const MAX_INSTANCE_PAGE = 1000
/** Longest `listInstances` cursor: hex of a 27-byte time, a separator and an instance id. */
const MAX_CURSOR_BYTES = 2 * (28 + MAX_INSTANCE_ID_BYTES)

/** `Client.listInstances(options)`. */
const LIST_INSTANCES_FIELDS = {
  status: { kind: 'enum', values: ['Running', 'Completed', 'Failed', 'ContinuedAsNew'], defaultText: 'any status' },
  orchestrationName: { kind: 'string', maxBytes: MAX_NAME_BYTES, defaultText: 'any orchestration' },
  parentInstanceId: { ...INSTANCE_ID, defaultText: 'any instance' },
  createdFromMs: int(0, MAX_DATE_MS, { defaultText: 'any time' }),
  createdBeforeMs: int(0, MAX_DATE_MS, { defaultText: 'any time' }),
  limit: int(1, MAX_INSTANCE_PAGE, { default: 100 }),
  cursor: { kind: 'string', maxBytes: MAX_CURSOR_BYTES, defaultText: 'the first page' },
}

/** `Client.purgeDeadLetters(options)`. */
const DEAD_LETTER_PURGE_FIELDS = {
  instanceId: { ...INSTANCE_ID, defaultText: 'all instances' },
  deadBeforeMs: int(0, MAX_DATE_MS, { defaultText: 'any time' }),
}

/** The `filter` of `Client.deleteInstanceBulk` and `Client.pruneExecutionsBulk`. */
const INSTANCE_FILTER_FIELDS = {
  instanceIds: { kind: 'instanceIds', max: MAX_BULK_INSTANCES, defaultText: 'any instance' },
  completedBefore: EPOCH_MS,
  // duroxide applies the default; it is documentation here.
  limit: int(1, MAX_BULK_INSTANCES, { default: 1000 }),
}

/** The `options` of `Client.pruneExecutions` and `Client.pruneExecutionsBulk`. */
const PRUNE_FIELDS = {
  keepLast: int(0, MAX_TIMEOUT_MS, { defaultText: 'only the current one' }),
  completedBefore: EPOCH_MS,
}

/** The last argument of a Client wait. */
const WAIT_FIELDS = {
  signal: { kind: 'abortSignal', defaultText: 'none' },
}

/** The last argument of `Client.waitForOrchestration` and `Client.waitForOrchestrationTyped`. */
const ORCHESTRATION_WAIT_FIELDS = {
  ...WAIT_FIELDS,
  orchestration: { kind: 'orchestrationRef', defaultText: 'none' },
}

/** `initTracing(options)`. */
const TRACING_FIELDS = {
  logFile: { kind: 'string', maxBytes: MAX_PATH_BYTES, required: true },
  logLevel: { kind: 'enum', values: LOG_LEVELS, default: 'info' },
  logFormat: { kind: 'enum', values: LOG_FORMATS, default: 'compact' },
}

/** `ctx.scheduleActivity(name, input, options)`. */
const ACTIVITY_FIELDS = {
  sessionId: { kind: 'string', maxBytes: MAX_NAME_BYTES, defaultText: 'none' },
  tag: { kind: 'string', maxBytes: MAX_TAG_NAME_BYTES, defaultText: 'none' },
}

/** `ctx.scheduleSubOrchestration(name, input, options)`. */
const SUB_ORCHESTRATION_FIELDS = {
  instanceId: { ...INSTANCE_ID, defaultText: "generated from the parent's" },
  version: { kind: 'semver', defaultText: 'latest registered' },
}

/** The `retry` of `ctx.scheduleActivityWithRetry`. */
const RETRY_FIELDS = {
  maxAttempts: int(1, 1000, { required: true }),
  timeoutMs: int(0, MAX_TIMEOUT_MS, { defaultText: 'none' }),
  totalTimeoutMs: int(1, MAX_TIMEOUT_MS, { defaultText: 'none' }),
  backoff: { kind: 'backoff', default: 'exponential' },
}

/** `retry.backoff`: each kind's parameters and what the string form (`'fixed'`, …) means. */
const BACKOFFS = {
  none: { fields: {}, defaults: {} },
  fixed: { fields: { delayMs: int(0, MAX_TIMEOUT_MS) }, defaults: { delayMs: 1000 } },
  linear: { fields: { baseMs: int(0, MAX_TIMEOUT_MS), maxMs: int(0, MAX_TIMEOUT_MS) }, defaults: { baseMs: 100, maxMs: 30_000 } },
  exponential: {
    fields: { baseMs: int(0, MAX_TIMEOUT_MS), multiplier: { kind: 'number', min: 1, max: 100 }, maxMs: int(0, MAX_TIMEOUT_MS) },
    defaults: { baseMs: 100, multiplier: 2, maxMs: 30_000 },
  },
}

/** The last argument of `Client.startOrchestration` and `Client.startOrchestrationVersioned`. */
const START_FIELDS = {
  ifExists: { kind: 'enum', values: ['ignore', 'throw'], default: 'ignore' },
}

/** `runtime.serveMetrics(options)`. */
const METRICS_SERVER_FIELDS = {
  port: int(0, 65_535, { default: 9464 }),
  host: { kind: 'string', maxBytes: 253, default: '127.0.0.1' },
  path: { kind: 'string', maxBytes: 1024, default: '/metrics' },
}

/** Every table above, by the lib/index.d.ts interface that types it. */
const OPTION_TABLES = {
  RuntimeOptions: RUNTIME_FIELDS,
  PostgresConnectOptions: POSTGRES_FIELDS,
  PostgresEntraOptions: ENTRA_FIELDS,
  ListDeadLettersOptions: DEAD_LETTER_LIST_FIELDS,
  PurgeDeadLettersOptions: DEAD_LETTER_PURGE_FIELDS,
  ListInstancesOptions: LIST_INSTANCES_FIELDS,
  InstanceFilter: INSTANCE_FILTER_FIELDS,
  PruneOptions: PRUNE_FIELDS,
  WaitOptions: WAIT_FIELDS,
  OrchestrationWaitOptions: ORCHESTRATION_WAIT_FIELDS,
  TracingOptions: TRACING_FIELDS,
  ActivityOptions: ACTIVITY_FIELDS,
  SubOrchestrationOptions: SUB_ORCHESTRATION_FIELDS,
  RetryPolicy: RETRY_FIELDS,
  MetricsServerOptions: METRICS_SERVER_FIELDS,
  StartOptions: START_FIELDS,
}

module.exports = {
  MAX_TIMEOUT_MS,
  MAX_INSTANCE_ID_BYTES,
  MAX_PATH_BYTES,
  MAX_HOST_BYTES,
  MAX_IDENTIFIER_BYTES,
  MAX_DEAD_LETTER_PAGE,
  MAX_WORKER_TAGS,
  MAX_TAG_NAME_BYTES,
  TAG_FILTER_MODES,
  RUNTIME_FIELDS,
  POSTGRES_FIELDS,
  ENTRA_FIELDS,
  METRICS_SERVER_FIELDS,
  START_FIELDS,
  DEAD_LETTER_LIST_FIELDS,
  DEAD_LETTER_PURGE_FIELDS,
  LIST_INSTANCES_FIELDS,
  INSTANCE_FILTER_FIELDS,
  PRUNE_FIELDS,
  WAIT_FIELDS,
  ORCHESTRATION_WAIT_FIELDS,
  TRACING_FIELDS,
  ACTIVITY_FIELDS,
  SUB_ORCHESTRATION_FIELDS,
  RETRY_FIELDS,
  BACKOFFS,
  OPTION_TABLES,
}
