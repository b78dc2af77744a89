'use strict'

const { SqliteProvider, PostgresProvider } = require('./providers')
const { Client } = require('./client')
const { Runtime } = require('./runtime')
const { OrchestrationContext, ActivityContext, ScheduledTask } = require('./context')
const { SteadfastError } = require('./errors')
const { NonRetryableError } = require('./failure')
const { MAX_WORKER_TAGS, MAX_TAG_NAME_BYTES, MAX_KV_KEYS, MAX_KV_VALUE_BYTES, MAX_CUSTOM_STATUS_BYTES } = require('./limits')
const { initTracing } = require('./tracing')
const { defineActivity, defineOrchestration, defineOrchestrationVersioned } = require('./refs')

module.exports = {
  SqliteProvider,
  PostgresProvider,
  Client,
  Runtime,
  OrchestrationContext,
  ActivityContext,
  ScheduledTask,
  SteadfastError,
  NonRetryableError,
  MAX_WORKER_TAGS,
  MAX_TAG_NAME_BYTES,
  MAX_KV_KEYS,
  MAX_KV_VALUE_BYTES,
  MAX_CUSTOM_STATUS_BYTES,
  initTracing,
  defineActivity,
  defineOrchestration,
  defineOrchestrationVersioned,
}
