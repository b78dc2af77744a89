// The ES module entry (package.json "exports" → "import"): the CommonJS entry's exports as
// named exports, and the whole of it as the default export.
import steadfast from './index.js'

export const {
  SqliteProvider,
  PostgresProvider,
  Client,
  Runtime,
  OrchestrationContext,
  ActivityContext,
  ScheduledTask,
  SteadfastError,
  MAX_WORKER_TAGS,
  MAX_TAG_NAME_BYTES,
  MAX_KV_KEYS,
  MAX_KV_VALUE_BYTES,
  MAX_CUSTOM_STATUS_BYTES,
  initTracing,
} = steadfast
export default steadfast
