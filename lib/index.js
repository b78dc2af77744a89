'use strict'

const { SqliteProvider, PostgresProvider } = require('./providers')
const { Client } = require('./client')
const { Runtime } = require('./runtime')
const { OrchestrationContext, ActivityContext, ScheduledTask } = require('./context')
const { SteadfastError } = require('./errors')
const { MAX_WORKER_TAGS, MAX_TAG_NAME_BYTES } = require('./options')
const { initTracing } = require('./tracing')

/** duroxide's limits (runtime::limits). */
const MAX_KV_KEYS = 150
const MAX_KV_VALUE_BYTES = 65_536
const MAX_CUSTOM_STATUS_BYTES = 262_144

module.exports = {
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
}
