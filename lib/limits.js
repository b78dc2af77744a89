'use strict'

// duroxide 0.1.32's hard limits (`duroxide::runtime::limits`). duroxide enforces them only
// after a turn ends, by failing the whole instance; checking them when the generator calls
// the context method turns that into an error thrown at the offending line instead.

const { rangeError, typeError } = require('./errors')
const { requireString, requireText } = require('./args')

const MAX_WORKER_TAGS = 5
const MAX_TAG_NAME_BYTES = 256
const MAX_KV_KEYS = 150
const MAX_KV_VALUE_BYTES = 64 * 1024
const MAX_CUSTOM_STATUS_BYTES = 256 * 1024
/** Instance ids duroxide reserves for generated sub-orchestration ids. */
const RESERVED_SUB_PREFIX = 'sub::'
const RESERVED_SUB_INFIX = '::sub::'

function checkKvValue(key, value) {
  return requireText(`value of key "${key}"`, value, MAX_KV_VALUE_BYTES)
}

/** `currentKeys` includes `key` when it is already set (an overwrite adds no key). */
function checkKvKeyCount(key, hasKey, currentKeys) {
  if (!hasKey && currentKeys >= MAX_KV_KEYS) {
    throw rangeError(`key "${key}" would exceed the limit of ${MAX_KV_KEYS} keys per instance (clear keys first)`)
  }
}

function checkCustomStatus(status) {
  return requireText('status', status, MAX_CUSTOM_STATUS_BYTES)
}

function checkTag(name, tag) {
  return requireString(name, tag, MAX_TAG_NAME_BYTES)
}

/** duroxide panics on a start whose top-level id uses its generated-id markers. */
function checkRootInstanceId(name, id) {
  if (id.startsWith(RESERVED_SUB_PREFIX) || id.includes(RESERVED_SUB_INFIX)) {
    throw typeError('ERR_INVALID_ARG_VALUE', `${name} must not start with "${RESERVED_SUB_PREFIX}" or contain "${RESERVED_SUB_INFIX}" (reserved for generated sub-orchestration ids; got ${JSON.stringify(id)})`)
  }
  return id
}

module.exports = {
  MAX_KV_KEYS,
  MAX_KV_VALUE_BYTES,
  MAX_CUSTOM_STATUS_BYTES,
  MAX_TAG_NAME_BYTES,
  MAX_WORKER_TAGS,
  checkKvValue,
  checkKvKeyCount,
  checkCustomStatus,
  checkTag,
  checkRootInstanceId,
}
