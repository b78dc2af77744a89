// PostgresProvider.connectWithEntra / connectWithSchemaAndEntra against the real server, logging
// in as a role that must give a password (scripts/machine-setup.sh makes members of
// steadfast_password_auth do so): the token is the password. Tokens come from `getToken` or from
// the default chain, here served by local stand-ins for Entra's endpoints (workload identity,
// managed identity) and for the Azure CLI.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdtempSync, writeFileSync, chmodSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { randomBytes } from 'node:crypto'
import { steadfast, DATABASE_URL, FAST, uid, pgSchema, sleep, until } from './helpers.mjs'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { PostgresProvider, Runtime, Client } = steadfast

const PASSWORD_AUTH_ROLE = 'steadfast_password_auth'
const AUDIENCE = 'https://ossrdbms-aad.database.windows.net/.default'
const server = new URL(DATABASE_URL)
const HOST = server.hostname
const PORT = Number(server.port || 5432)
const DATABASE = decodeURIComponent(server.pathname.slice(1))
const ROLE = `sf_entra_${randomBytes(4).toString('hex')}`
const CREDENTIAL_ENV = ['AZURE_FEDERATED_TOKEN_FILE', 'AZURE_CLIENT_ID', 'AZURE_TENANT_ID', 'AZURE_AUTHORITY_HOST', 'IDENTITY_ENDPOINT', 'IDENTITY_HEADER']
const schemas = []
const scratch = mkdtempSync(join(tmpdir(), 'sf-entra-'))
let serverHasTls = true

async function admin(sql) {
  const client = new pg.Client({ connectionString: DATABASE_URL })
  await client.connect()
  try {
    return await client.query(sql)
  } finally {
    await client.end()
  }
}

async function schema() {
  const s = await pgSchema('entra')
  schemas.push(s)
  return s.schema
}

/** Run `fn` with the credential variables set to `vars` (all others unset), then restore them. */
async function withCredentialEnv(vars, fn) {
  const saved = Object.fromEntries([...CREDENTIAL_ENV, 'PATH'].map((k) => [k, process.env[k]]))
  for (const k of CREDENTIAL_ENV) delete process.env[k]
  Object.assign(process.env, vars)
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/** A local HTTP server answering with `respond(request, body)`; resolves to { url, requests, close }. */
async function tokenEndpoint(respond) {
  const requests = []
  const http = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body })
      const [status, json] = respond(req, body)
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json))
    })
  })
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${http.address().port}`, requests, close: () => new Promise((r) => http.close(r)) }
}

/** A started runtime on `provider` with the `EchoFlow` orchestration. */
async function echoRuntime(provider) {
  const runtime = new Runtime(provider, FAST)
  runtime.registerActivity('Echo', async (_ctx, input) => input)
  runtime.registerOrchestration('EchoFlow', function* (ctx, input) {
    return yield ctx.scheduleActivity('Echo', input)
  })
  await runtime.start()
  return runtime
}

/** Start an `EchoFlow` through `provider`'s client and wait for its output. */
async function echoes(provider) {
  const client = new Client(provider)
  const id = uid('entra')
  await client.startOrchestration(id, 'EchoFlow', 'hi')
  const status = await client.waitForOrchestration(id, 20_000)
  assert.equal(status.status, 'Completed')
  assert.equal(status.output, 'hi')
}

async function runsAWorkflow(provider) {
  const runtime = await echoRuntime(provider)
  try {
    await echoes(provider)
  } finally {
    await runtime.shutdown(1000)
  }
}

before(async () => {
  serverHasTls = (await admin('SHOW ssl')).rows[0].ssl === 'on'
  await admin(`CREATE ROLE ${ROLE} LOGIN PASSWORD 'token-1' IN ROLE ${PASSWORD_AUTH_ROLE}`)
  await admin(`GRANT CREATE ON DATABASE "${DATABASE}" TO ${ROLE}`)
  const wrong = new pg.Client({ host: HOST, port: PORT, database: DATABASE, user: ROLE, password: 'not-it' })
  const loggedIn = await wrong.connect().then(
    () => true,
    () => false,
  )
  if (loggedIn) await wrong.end()
  assert.equal(loggedIn, false, `role ${ROLE} logged in with a wrong password: run \`source scripts/machine-setup.sh && prepare_test_machine\` (it adds password logins for ${PASSWORD_AUTH_ROLE} to pg_hba.conf)`)
})

after(async () => {
  for (const s of schemas) await s.drop()
  await admin(`DROP OWNED BY ${ROLE} CASCADE`)
  await admin(`REVOKE ALL ON DATABASE "${DATABASE}" FROM ${ROLE}`)
  await admin(`DROP ROLE IF EXISTS ${ROLE}`)
  rmSync(scratch, { recursive: true, force: true })
})

test('a token from getToken is the password; a wrong one is refused', async (t) => {
  if (!serverHasTls) return t.skip('the test server has ssl off')
  const provider = await PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, await schema(), {
    sslMode: 'require',
    getToken: async () => ({ token: 'token-1', expiresOnTimestamp: Date.now() + 3_600_000 }),
  })
  try {
    assert.equal(provider.schema, schemas.at(-1).schema)
    await runsAWorkflow(provider)
  } finally {
    await provider.close()
  }
  await assert.rejects(
    PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, await schema(), { sslMode: 'require', getToken: () => 'not-the-token' }),
    (e) => e.code === 'ERR_STEADFAST_PROVIDER_OPEN' && !e.message.includes('not-the-token'),
  )
})

test('after a refresh, new connections of the provider and of its runtime use the new token', async (t) => {
  if (!serverHasTls) return t.skip('the test server has ssl off')
  let current = 'token-1'
  let calls = 0
  const provider = await PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, await schema(), {
    sslMode: 'require',
    refreshIntervalMs: 1000,
    getToken: () => {
      calls++
      return current
    },
  })
  const runtime = await echoRuntime(provider)
  try {
    await echoes(provider)
    // The token expires: the server wants the next one, and every open connection (the
    // provider's and the running runtime's) is gone.
    await admin(`ALTER ROLE ${ROLE} PASSWORD 'token-2'`)
    current = 'token-2'
    const seen = calls
    await until(() => calls > seen, 10_000, 'a refresh')
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${ROLE}'`)
    const client = new Client(provider)
    await until(() => client.listAllInstances().then(() => true, () => false), 20_000, 'a client call on a new connection')
    await echoes(provider)
  } finally {
    await runtime.shutdown(1000)
    await provider.close()
    await admin(`ALTER ROLE ${ROLE} PASSWORD 'token-1'`)
  }
  const stopped = calls
  await sleep(1500)
  assert.equal(calls, stopped, 'close() stops the refresh')
})

test('default chain: workload identity exchanges the federated token at the authority', async (t) => {
  if (!serverHasTls) return t.skip('the test server has ssl off')
  const endpoint = await tokenEndpoint((req, body) => {
    const form = new URLSearchParams(body)
    const ok =
      req.url === '/tenant-1/oauth2/v2.0/token' &&
      form.get('grant_type') === 'client_credentials' &&
      form.get('client_id') === 'client-1' &&
      form.get('scope') === AUDIENCE &&
      form.get('client_assertion') === 'federated-assertion' &&
      form.get('client_assertion_type') === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
    return ok ? [200, { access_token: 'token-1', expires_in: 3600, token_type: 'Bearer' }] : [400, { error: 'invalid_request' }]
  })
  const file = join(scratch, 'federated-token')
  writeFileSync(file, 'federated-assertion\n')
  try {
    const env = { AZURE_FEDERATED_TOKEN_FILE: file, AZURE_CLIENT_ID: 'client-1', AZURE_TENANT_ID: 'tenant-1', AZURE_AUTHORITY_HOST: endpoint.url }
    const provider = await withCredentialEnv(env, async () =>
      PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, await schema(), { sslMode: 'require' }),
    )
    await provider.close()
    assert.equal(endpoint.requests.length, 1)
    assert.equal(endpoint.requests[0].method, 'POST')
  } finally {
    await endpoint.close()
  }
})

test('default chain: managed identity through the App Service endpoint', async (t) => {
  if (!serverHasTls) return t.skip('the test server has ssl off')
  const endpoint = await tokenEndpoint((req) => {
    const url = new URL(req.url, 'http://x')
    const ok =
      req.headers['x-identity-header'] === 'secret-header' &&
      url.searchParams.get('resource') === 'https://ossrdbms-aad.database.windows.net' &&
      url.searchParams.get('api-version') === '2019-08-01'
    return ok ? [200, { access_token: 'token-1', expires_on: String(Math.floor(Date.now() / 1000) + 3600) }] : [401, { error: 'unauthorized' }]
  })
  try {
    const env = { IDENTITY_ENDPOINT: `${endpoint.url}/msi/token`, IDENTITY_HEADER: 'secret-header' }
    const name = await schema()
    const provider = await withCredentialEnv(env, () =>
      PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, name, { sslMode: 'require' }),
    )
    assert.equal(provider.schema, name)
    await provider.close()
    assert.equal(endpoint.requests.length, 1)
  } finally {
    await endpoint.close()
  }
})

test('default chain: the Azure CLI, after the metadata service does not answer', async (t) => {
  if (!serverHasTls) return t.skip('the test server has ssl off')
  const bin = join(scratch, 'bin')
  const az = join(bin, 'az')
  require('node:fs').mkdirSync(bin, { recursive: true })
  writeFileSync(
    az,
    `#!/bin/sh\n[ "$1 $2 $3 $4" = "account get-access-token --scope ${AUDIENCE}" ] || { echo "unexpected: $*" >&2; exit 2; }\n` +
      `echo '{"accessToken": "token-1", "expiresOn": "2099-01-01 00:00:00.000000", "expires_on": 4070908800}'\n`,
  )
  chmodSync(az, 0o755)
  const provider = await withCredentialEnv({ PATH: `${bin}:${process.env.PATH}` }, async () =>
    PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, await schema(), { sslMode: 'require' }),
  )
  await provider.close()
})

test('no credential gives a token: ERR_STEADFAST_ENTRA_TOKEN names each one', async () => {
  const error = await withCredentialEnv({ PATH: scratch }, () =>
    PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE).then(
      () => assert.fail('connected without a token'),
      (e) => e,
    ),
  )
  assert.equal(error.code, 'ERR_STEADFAST_ENTRA_TOKEN')
  assert.match(error.message, /workload identity: AZURE_FEDERATED_TOKEN_FILE/)
  assert.match(error.message, /managed identity: /)
  assert.match(error.message, /Azure CLI: .*`az` is not on PATH/)
  const thrown = await PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, {
    getToken: () => {
      throw new Error('no login')
    },
  }).catch((e) => e)
  assert.equal(thrown.code, 'ERR_STEADFAST_ENTRA_TOKEN')
  assert.match(thrown.message, /getToken failed: no login/)
  const empty = await PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, { getToken: () => '' }).catch((e) => e)
  assert.equal(empty.code, 'ERR_STEADFAST_ENTRA_TOKEN')
})

test('arguments and options are checked before any token is fetched', async () => {
  const getToken = () => assert.fail('no token may be fetched for bad arguments')
  const cases = [
    [() => PostgresProvider.connectWithEntra('', PORT, DATABASE, ROLE, { getToken }), TypeError, /host/],
    [() => PostgresProvider.connectWithEntra(HOST, 0, DATABASE, ROLE, { getToken }), RangeError, /port/],
    [() => PostgresProvider.connectWithEntra(HOST, 5432.5, DATABASE, ROLE, { getToken }), RangeError, /port/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, 7, ROLE, { getToken }), TypeError, /database/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, 'x'.repeat(64), { getToken }), RangeError, /user/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, { getToken, refreshIntervalMs: 10 }), RangeError, /refreshIntervalMs/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, { getToken, sslMode: 'disable' }), TypeError, /sslMode/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, { getToken: 'token' }), TypeError, /getToken/],
    [() => PostgresProvider.connectWithEntra(HOST, PORT, DATABASE, ROLE, { getToken, tenant: 'x' }), TypeError, /tenant/],
    [() => PostgresProvider.connectWithSchemaAndEntra(HOST, PORT, DATABASE, ROLE, 'pg_bad', { getToken }), TypeError, /schema/],
  ]
  for (const [call, type, pattern] of cases) {
    await assert.rejects(call, (e) => e instanceof type && pattern.test(e.message), String(call))
  }
})
