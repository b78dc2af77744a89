'use strict'

// Microsoft Entra ID access tokens for Azure Database for PostgreSQL: where a token comes
// from, and the refresh that keeps a provider's password current.
//
// The default source tries, in order, the credentials of duroxide-pg's default chain:
// workload identity (AKS: a federated token file), managed identity (App Service and
// Container Apps' local endpoint, else the instance metadata service) and the Azure CLI
// (`az`, for a developer's machine). Each is plain HTTP or one command, with no SDK. An
// application with its own credential passes `getToken` instead (e.g.
// `() => new DefaultAzureCredential().getToken(scope)` from @azure/identity).

const { execFile } = require('node:child_process')
const { readFile } = require('node:fs/promises')
const { SteadfastError } = require('./errors')

const DEFAULT_AUDIENCE = 'https://ossrdbms-aad.database.windows.net/.default'
const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com'
const IMDS_ENDPOINT = 'http://169.254.169.254/metadata/identity/oauth2/token'
/** The metadata service answers within a second where it exists; elsewhere nothing answers. */
const IMDS_TIMEOUT_MS = 1_000
const HTTP_TIMEOUT_MS = 10_000
const CLI_TIMEOUT_MS = 30_000
/** A token is replaced this long before it expires, whatever the refresh interval. */
const EXPIRY_MARGIN_MS = 5 * 60_000
/** After a failed refresh, the next try waits this long (doubling), at most the interval. */
const RETRY_FIRST_MS = 1_000
/** A token already within the margin (a source that hands out cached tokens) is asked again after this long at the least, not in a loop. */
const MIN_REFRESH_MS = 30_000

function entraError(message, cause) {
  return new SteadfastError('ERR_STEADFAST_ENTRA_TOKEN', message, cause === undefined ? undefined : { cause })
}

/** `{ token, expiresAt }` (expiresAt: ms since the epoch, or undefined) from a source's answer. */
function normalizeToken(answer, source) {
  const token = typeof answer === 'string' ? answer : answer?.token
  if (typeof token !== 'string' || token === '') {
    throw entraError(`${source} gave no token: expected a non-empty string or { token, expiresOnTimestamp }`)
  }
  const expiresAt = typeof answer === 'object' && Number.isFinite(answer.expiresOnTimestamp) ? answer.expiresOnTimestamp : undefined
  return { token, expiresAt }
}

async function httpJson(url, init, timeoutMs, what) {
  let response
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) })
  } catch (e) {
    throw entraError(`${what}: ${e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : e.message}`, e)
  }
  const text = await response.text()
  if (!response.ok) throw entraError(`${what}: HTTP ${response.status}: ${text.slice(0, 500)}`)
  try {
    return JSON.parse(text)
  } catch (e) {
    throw entraError(`${what}: the answer is not JSON`, e)
  }
}

/** An OAuth token answer: `access_token` with `expires_on` (s since the epoch) or `expires_in` (s). */
function oauthToken(body, what) {
  if (typeof body?.access_token !== 'string' || body.access_token === '') throw entraError(`${what}: the answer has no access_token`)
  const on = Number(body.expires_on)
  const inSeconds = Number(body.expires_in)
  const expiresAt = Number.isFinite(on) && on > 0 ? on * 1000 : Number.isFinite(inSeconds) ? Date.now() + inSeconds * 1000 : undefined
  return { token: body.access_token, expiresAt }
}

/** The resource form of a `.default` scope, as the managed-identity endpoints take it. */
function resourceOf(scope) {
  return scope.endsWith('/.default') ? scope.slice(0, -'/.default'.length) : scope
}

const credentials = [
  {
    name: 'workload identity',
    configured: (env) => Boolean(env.AZURE_FEDERATED_TOKEN_FILE && env.AZURE_CLIENT_ID && env.AZURE_TENANT_ID),
    missing: 'AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID and AZURE_TENANT_ID are not all set',
    async token(scope, env) {
      const assertion = (await readFile(env.AZURE_FEDERATED_TOKEN_FILE, 'utf8')).trim()
      const authority = (env.AZURE_AUTHORITY_HOST || DEFAULT_AUTHORITY).replace(/\/+$/, '')
      const url = `${authority}/${encodeURIComponent(env.AZURE_TENANT_ID)}/oauth2/v2.0/token`
      const body = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: env.AZURE_CLIENT_ID,
        scope,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
      })
      return oauthToken(await httpJson(url, { method: 'POST', body }, HTTP_TIMEOUT_MS, url), 'workload identity')
    },
  },
  {
    name: 'managed identity',
    configured: () => true,
    async token(scope, env) {
      const params = new URLSearchParams({ resource: resourceOf(scope) })
      if (env.AZURE_CLIENT_ID) params.set('client_id', env.AZURE_CLIENT_ID)
      if (env.IDENTITY_ENDPOINT && env.IDENTITY_HEADER) {
        params.set('api-version', '2019-08-01')
        const url = `${env.IDENTITY_ENDPOINT}?${params}`
        const init = { headers: { 'X-IDENTITY-HEADER': env.IDENTITY_HEADER } }
        return oauthToken(await httpJson(url, init, HTTP_TIMEOUT_MS, env.IDENTITY_ENDPOINT), 'managed identity')
      }
      params.set('api-version', '2018-02-01')
      const init = { headers: { Metadata: 'true' } }
      return oauthToken(await httpJson(`${IMDS_ENDPOINT}?${params}`, init, IMDS_TIMEOUT_MS, IMDS_ENDPOINT), 'managed identity')
    },
  },
  {
    name: 'Azure CLI',
    configured: () => true,
    token(scope, env) {
      return new Promise((resolve, reject) => {
        const args = ['account', 'get-access-token', '--scope', scope, '--output', 'json']
        execFile('az', args, { env, timeout: CLI_TIMEOUT_MS }, (error, stdout, stderr) => {
          if (error) {
            const why = error.code === 'ENOENT' ? '`az` is not on PATH' : String(stderr || error.message).trim().slice(0, 500)
            reject(entraError(`az account get-access-token: ${why}`, error))
            return
          }
          try {
            const answer = JSON.parse(stdout)
            const on = Number(answer.expires_on)
            const expiresAt = Number.isFinite(on) && on > 0 ? on * 1000 : Date.parse(answer.expiresOn) || undefined
            resolve({ ...normalizeToken(answer.accessToken, 'Azure CLI'), expiresAt })
          } catch (e) {
            reject(e instanceof SteadfastError ? e : entraError('az account get-access-token: the answer is not JSON', e))
          }
        })
      })
    },
  },
]

/** The default chain: the first credential that gives a token; all their failures if none does. */
async function defaultToken(scope, env = process.env) {
  const failures = []
  for (const credential of credentials) {
    if (!credential.configured(env)) {
      failures.push(`${credential.name}: ${credential.missing}`)
      continue
    }
    try {
      return await credential.token(scope, env)
    } catch (e) {
      failures.push(`${credential.name}: ${e.message}`)
    }
  }
  throw entraError(`no credential gave an Entra token for ${scope}: ${failures.join('; ')}`)
}

/** A function `() => Promise<{ token, expiresAt }>` for the options given. */
function tokenSource(options) {
  if (options.getToken) {
    return async () => {
      let answer
      try {
        answer = await options.getToken()
      } catch (e) {
        throw entraError(`getToken failed: ${e?.message ?? String(e)}`, e)
      }
      return normalizeToken(answer, 'getToken')
    }
  }
  return () => defaultToken(options.audience)
}

/**
 * Keeps a provider's password current: a new token before the interval ends or five minutes
 * before the token expires, whichever comes first; after a failure, tries again sooner,
 * keeping the last token. `report(error)` hears each failure. Stopped by `stop()`.
 */
class TokenRefresh {
  constructor(fetchToken, intervalMs, setPassword, report) {
    this.fetchToken = fetchToken
    this.intervalMs = intervalMs
    this.setPassword = setPassword
    this.report = report
    this.timer = undefined
    this.stopped = false
  }

  start(first) {
    this.schedule(this.delayAfter(first))
  }

  delayAfter({ expiresAt }) {
    const untilExpiry = expiresAt === undefined ? Infinity : expiresAt - Date.now() - EXPIRY_MARGIN_MS
    return Math.min(this.intervalMs, Math.max(MIN_REFRESH_MS, untilExpiry))
  }

  schedule(delay, retry = RETRY_FIRST_MS) {
    if (this.stopped) return
    this.timer = setTimeout(() => this.refresh(retry), delay)
    this.timer.unref()
  }

  async refresh(retry) {
    try {
      const next = await this.fetchToken()
      if (this.stopped) return
      this.setPassword(next.token)
      this.schedule(this.delayAfter(next))
    } catch (e) {
      if (this.stopped) return
      try {
        this.report(e)
      } catch {}
      this.schedule(retry, Math.min(retry * 2, this.intervalMs))
    }
  }

  stop() {
    this.stopped = true
    clearTimeout(this.timer)
  }
}

module.exports = { DEFAULT_AUDIENCE, tokenSource, defaultToken, TokenRefresh }
