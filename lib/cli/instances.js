'use strict'

// Reading one instance for a command: its info, or "not found" as exit code 1.

const { CliError, notFound } = require('./errors')

function missing(id) {
  return notFound(`there is no instance ${JSON.stringify(id)}`)
}

/** The instance's InstanceInfo; rejects with a not_found CliError when there is no such instance. */
async function instanceInfo(client, id) {
  try {
    return await client.getInstanceInfo(id)
  } catch (e) {
    // getInstanceInfo's error for an unknown id is the store's; getStatus says it plainly.
    if (e?.code === 'ERR_STEADFAST_NOT_FOUND' || (await client.getStatus(id)).status === 'NotFound') {
      throw missing(id)
    }
    throw e
  }
}

/** instanceInfo, or null when there is no such instance (e.g. deleted since it was listed). */
async function instanceInfoIfPresent(client, id) {
  try {
    return await instanceInfo(client, id)
  } catch (e) {
    if (e instanceof CliError && e.code === 'not_found') return null
    throw e
  }
}

/** The instance's status (getStatus); rejects with a not_found CliError when there is no such instance. */
async function instanceStatus(client, id) {
  const status = await client.getStatus(id)
  if (status.status === 'NotFound') throw missing(id)
  return status
}

module.exports = { instanceInfo, instanceInfoIfPresent, instanceStatus }
