// The `steadfast` command line's operator commands (bin/steadfast.js, lib/cli/), run as a
// child process against a real PostgreSQL schema that a real runtime filled: a completed, a
// failed, a poisoned (dead-lettered) and a waiting instance, and one with a tree of
// sub-orchestrations. Asserts on exit codes, text tables, --json documents, the effect of the
// writing commands (checked through the Client), usage and connection errors, a schema the
// command line must not migrate, the password never printed, and a SQLite store.
import { describe, test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { steadfast, DATABASE_URL, FAST, POISON_FAST, uid, until, runtimeOn } from './helpers.mjs'
import { operatorBackend, operatorSampleIds, populate, registerOperatorSamples } from './operator-store.mjs'

const require = createRequire(import.meta.url)
const pg = require('pg')
const { SqliteProvider, Runtime, Client } = steadfast

const BIN = fileURLToPath(new URL('../bin/steadfast.js', import.meta.url))
const SECRET = 's3cr3t-pw'

/** Run `steadfast ...args`; resolves to { code, stdout, stderr }. */
function cli(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(new Error(`steadfast ${args.join(' ')}: ${err.message}\n${stdout}${stderr}`))
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

/** Run with --json and parse stdout (which must be one JSON document). */
async function cliJson(...args) {
  const r = await cli(...args, '--json')
  try {
    return { ...r, doc: JSON.parse(r.stdout) }
  } catch {
    assert.fail(`stdout of ${args.join(' ')} is not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`)
  }
}

function assertExit(r, code, what) {
  assert.equal(r.code, code, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`)
}

describe('steadfast CLI on PostgreSQL', { timeout: 300_000 }, () => {
  const backend = operatorBackend('cli')
  const fx = runtimeOn(backend, POISON_FAST, registerOperatorSamples)
  const ids = operatorSampleIds()
  const on = (...args) => [...args, '--url', DATABASE_URL, '--schema', backend.schema]

  test('set-up: the runtime ends every instance but the waiting one', async () => {
    await populate(fx.client, ids)
  })

  test('list: a table with every instance, and --json with their statuses', async () => {
    const r = await cli(...on('list'))
    assertExit(r, 0, 'list')
    const lines = r.stdout.split('\n')
    assert.match(lines[0], /^ID\s+NAME\s+VERSION\s+STATUS\s+EXECUTION\s+CREATED\s+UPDATED$/)
    const lineOf = (id) => lines.find((l) => l.startsWith(`${id} `)) ?? assert.fail(`no line for ${id}:\n${r.stdout}`)
    assert.match(lineOf(ids.done), /\sGreet\s+\S+\s+Completed\s+1\s+\d{4}-\d\d-\d\dT/)
    assert.match(lineOf(ids.failed), /\sBoom\s+\S+\s+Failed\s/)
    assert.match(lineOf(ids.waiting), /\sWaitsForGo\s+\S+\s+Running\s/)
    assert.match(lineOf(`${ids.parent}-a-grandchild`), /\sChild\s/)
    // Columns line up: every row's STATUS starts where the header's does.
    const at = lines[0].indexOf('STATUS')
    assert.equal(lineOf(ids.done).slice(at, at + 9), 'Completed')
    assert.match(r.stdout, /\n8 instances\.\n$/)

    const j = await cliJson(...on('list'))
    assertExit(j, 0, 'list --json')
    assert.equal(j.doc.instances.length, 8)
    assert.equal(j.doc.nextCursor, null)
    const byId = Object.fromEntries(j.doc.instances.map((i) => [i.instanceId, i]))
    assert.equal(byId[ids.done].status, 'Completed')
    assert.equal(byId[ids.done].orchestrationName, 'Greet')
    assert.equal(byId[ids.failed].status, 'Failed')
    assert.equal(byId[ids.poisoned].status, 'Failed')
    assert.equal(byId[ids.waiting].status, 'Running')
    assert.equal(byId[`${ids.parent}-b`].parentInstanceId, ids.parent)
    assert.equal(typeof byId[ids.done].createdAt, 'number')
  })

  test('list --status filters and --limit bounds the listing', async () => {
    const failed = await cliJson(...on('list', '--status', 'failed'))
    assertExit(failed, 0, 'list --status failed')
    assert.equal(failed.doc.status, 'Failed')
    assert.deepEqual(failed.doc.instances.map((i) => i.instanceId).sort(), [ids.failed, ids.poisoned].sort())
    const running = await cli(...on('list', '--status', 'Running'))
    assertExit(running, 0, 'list --status Running')
    assert.ok(running.stdout.includes(ids.waiting) && !running.stdout.includes(ids.done), running.stdout)
    assert.match(running.stdout, /1 Running instance\./)

    const one = await cli(...on('list', '--limit', '1'))
    assertExit(one, 0, 'list --limit 1')
    assert.equal(one.stdout.trim().split('\n').length, 4, one.stdout) // header, row, blank, footer
    assert.match(one.stdout, /\n1 instance shown; next page: --cursor [0-9a-f]+\n$/)
    // Following the cursors walks every instance once, newest first.
    const walked = []
    let cursor = []
    for (;;) {
      const page = await cliJson(...on('list', '--limit=3', ...cursor))
      assertExit(page, 0, 'list --limit=3 --cursor')
      walked.push(...page.doc.instances.map((i) => i.instanceId))
      if (page.doc.nextCursor === null) break
      cursor = ['--cursor', page.doc.nextCursor]
    }
    const all = (await cliJson(...on('list'))).doc.instances.map((i) => i.instanceId)
    assert.deepEqual(walked, all)
    assert.equal(new Set(walked).size, 8)
  })

  test('describe: status, output or error, and executions; an unknown id exits 1', async () => {
    const r = await cli(...on('describe', ids.done))
    assertExit(r, 0, 'describe done')
    assert.match(r.stdout, new RegExp(`^Instance:\\s+${ids.done}$`, 'm'))
    assert.match(r.stdout, /^Status:\s+Completed$/m)
    assert.match(r.stdout, /^Output:\s+"hello Ada"$/m)
    assert.match(r.stdout, /^1 execution:\nEXECUTION\s+STATUS\s+STARTED\s+COMPLETED\s+EVENTS\n1\s+Completed\s/m)

    const failed = await cli(...on('describe', ids.failed))
    assertExit(failed, 0, 'describe failed')
    assert.match(failed.stdout, /^Status:\s+Failed \(application\)$/m)
    assert.match(failed.stdout, /^Error:\s+.*boom on purpose/m)

    const waiting = await cliJson(...on('describe', ids.waiting))
    assertExit(waiting, 0, 'describe waiting --json')
    assert.equal(waiting.doc.instance.instanceId, ids.waiting)
    assert.equal(waiting.doc.status.status, 'Running')
    assert.equal(waiting.doc.status.customStatus, 'waiting for Go')
    assert.equal(waiting.doc.executionCount, 1)
    assert.equal(waiting.doc.executions[0].status, 'Running')

    const child = await cliJson(...on('describe', `${ids.parent}-a`))
    assert.equal(child.doc.instance.parentInstanceId, ids.parent)

    const missing = await cli(...on('describe', 'no-such-instance'))
    assertExit(missing, 1, 'describe unknown')
    assert.match(missing.stderr, /there is no instance "no-such-instance"/)
    const missingJson = await cliJson(...on('describe', 'no-such-instance'))
    assertExit(missingJson, 1, 'describe unknown --json')
    assert.equal(missingJson.doc.error.code, 'not_found')
  })

  test('history: the events of the current or a given execution', async () => {
    const r = await cli(...on('history', ids.done))
    assertExit(r, 0, 'history')
    assert.match(r.stdout, /^EVENT\s+KIND\s+SOURCE\s+TIME\s+DATA$/m)
    const kinds = r.stdout.split('\n').slice(3).filter(Boolean).map((l) => l.split(/\s+/)[1])
    assert.equal(kinds[0], 'OrchestrationStarted')
    assert.ok(kinds.includes('ActivityScheduled') && kinds.includes('ActivityCompleted'), kinds.join(' '))
    assert.equal(kinds[kinds.length - 1], 'OrchestrationCompleted')
    assert.match(r.stdout, /OrchestrationStarted\s.*"name":"Greet"/)

    const j = await cliJson(...on('history', ids.done, '--execution', '1'))
    assertExit(j, 0, 'history --execution 1 --json')
    assert.equal(j.doc.executionId, 1)
    assert.deepEqual(j.doc.events.map((e) => e.kind), kinds)
    assert.equal(JSON.parse(j.doc.events[j.doc.events.length - 1].data), 'hello Ada')

    const failed = await cliJson(...on('history', ids.failed))
    assert.equal(failed.doc.events[failed.doc.events.length - 1].kind, 'OrchestrationFailed')

    const noExecution = await cli(...on('history', ids.done, '--execution', '2'))
    assertExit(noExecution, 1, 'history --execution 2')
    assert.match(noExecution.stderr, /has no execution 2 \(it has 1\)/)
    assertExit(await cli(...on('history', 'no-such-instance')), 1, 'history unknown')
  })

  test('tree: the sub-orchestrations under their parent', async () => {
    const r = await cli(...on('tree', ids.parent))
    assertExit(r, 0, 'tree')
    const lines = r.stdout.split('\n')
    assert.match(lines[0], /^INSTANCE\s+NAME\s+VERSION\s+STATUS$/)
    assert.match(lines[1], new RegExp(`^${ids.parent}\\s+Parent\\s+\\S+\\s+Completed$`))
    assert.match(lines[2], new RegExp(`^├─ ${ids.parent}-a\\s+Child\\s`))
    assert.match(lines[3], new RegExp(`^│  └─ ${ids.parent}-a-grandchild\\s+Child\\s`))
    assert.match(lines[4], new RegExp(`^└─ ${ids.parent}-b\\s+Child\\s`))
    assert.match(r.stdout, /\n4 instances\.\n$/)

    const j = await cliJson(...on('tree', ids.parent))
    assertExit(j, 0, 'tree --json')
    assert.equal(j.doc.size, 4)
    assert.equal(j.doc.omitted, 0)
    assert.equal(j.doc.tree.instanceId, ids.parent)
    assert.deepEqual(j.doc.tree.children.map((c) => c.instanceId), [`${ids.parent}-a`, `${ids.parent}-b`])
    assert.deepEqual(j.doc.tree.children[0].children.map((c) => c.instanceId), [`${ids.parent}-a-grandchild`])

    const leaf = await cli(...on('tree', ids.done))
    assertExit(leaf, 0, 'tree of a lone instance')
    assert.match(leaf.stdout, /\n1 instance\.\n$/)
    assertExit(await cli(...on('tree', 'no-such-instance')), 1, 'tree unknown')
  })

  test('dead-letters: list, show, purge needs --yes, requeue, purge', async () => {
    const listed = await cli(...on('dead-letters'))
    assertExit(listed, 0, 'dead-letters')
    assert.match(listed.stdout, /^ID\s+QUEUE\s+INSTANCE\s+EXECUTION\s+ACTIVITY\s+ATTEMPTS\s+REASON\s+DEAD AT\s+ERROR$/m)
    assert.match(listed.stdout, new RegExp(`^\\d+\\s+worker\\s+${ids.poisoned}\\s+1\\s+\\d+\\s+2\\s+poison\\s`, 'm'))

    const j = await cliJson(...on('dead-letters', 'list', '--instance', ids.poisoned))
    assertExit(j, 0, 'dead-letters list --json')
    assert.equal(j.doc.deadLetters.length, 1)
    const letter = j.doc.deadLetters[0]
    assert.equal(letter.instanceId, ids.poisoned)
    assert.equal(letter.reason, 'poison')
    assert.equal(j.doc.nextAfterId, null)
    const paged = await cliJson(...on('dead-letters', 'list', '--limit', '1'))
    assert.equal(paged.doc.nextAfterId, letter.id)
    const after = await cliJson(...on('dead-letters', 'list', '--after', String(letter.id)))
    assert.deepEqual(after.doc.deadLetters, [])

    const shown = await cli(...on('dead-letters', 'show', String(letter.id)))
    assertExit(shown, 0, 'dead-letters show')
    assert.match(shown.stdout, new RegExp(`^Dead letter:\\s+${letter.id}$`, 'm'))
    assert.match(shown.stdout, /^Attempts:\s+2 \(max 1\)$/m)
    assert.match(shown.stdout, /^Work item:\n {2}\{\n/m)
    assert.match(shown.stdout, /"Missing"/)
    assertExit(await cli(...on('dead-letters', 'show', '999999999')), 1, 'show of an unknown dead letter')

    const refused = await cli(...on('dead-letters', 'purge'))
    assertExit(refused, 1, 'purge without --yes')
    assert.match(refused.stdout, /Would purge 1 dead letter; nothing was deleted\. Run again with --yes/)
    assert.ok(refused.stdout.includes(ids.poisoned), refused.stdout)
    assert.notEqual(await fx.client.getDeadLetter(letter.id), null, 'purge without --yes deleted')
    const before = await cliJson(...on('dead-letters', 'purge', '--dead-before', '2000-01-01T00:00:00Z'))
    assertExit(before, 1, 'purge --dead-before in the past')
    assert.equal(before.doc.wouldPurge, 0)

    const requeued = await cli(...on('dead-letters', 'requeue', String(letter.id)))
    assertExit(requeued, 0, 'requeue')
    assert.match(requeued.stdout, new RegExp(`Requeued dead letter ${letter.id}: a new worker message`))
    assert.equal(await fx.client.getDeadLetter(letter.id), null, 'the requeued letter is still stored')
    assertExit(await cli(...on('dead-letters', 'requeue', String(letter.id))), 1, 'a second requeue')

    // The requeued activity is still unregistered, so it is poisoned (and dead-lettered) again.
    await until(async () => (await fx.client.listDeadLetters()).length === 1, 30_000, 'the requeued message to die again')
    const purged = await cliJson(...on('dead-letters', 'purge', '--instance', ids.poisoned, '--yes'))
    assertExit(purged, 0, 'purge --yes')
    assert.equal(purged.doc.purged, 1)
    assert.deepEqual(await fx.client.listDeadLetters(), [])
  })

  test('cancel: the running instance ends Failed with the reason; others exit 1', async () => {
    const r = await cli(...on('cancel', ids.waiting, '--reason', 'operator says stop', '--wait', '30'))
    assertExit(r, 0, 'cancel --wait')
    assert.match(r.stdout, /requested \(reason: "operator says stop"\)\.\nIt ended Failed/)
    const s = await fx.client.getStatus(ids.waiting)
    assert.equal(s.status, 'Failed')
    assert.match(s.error, /cancel.*operator says stop/i)

    const again = await cliJson(...on('cancel', ids.waiting))
    assertExit(again, 1, 'cancel of a failed instance')
    assert.equal(again.doc.error.code, 'not_running')
    const unknown = await cli(...on('cancel', 'no-such-instance'))
    assertExit(unknown, 1, 'cancel unknown')
    assert.match(unknown.stderr, /there is no instance/)
    assert.equal((await fx.client.getStatus(ids.done)).status, 'Completed')
  })

  test('usage errors exit 2 and name the flag or argument', async () => {
    const usage = async (args, pattern) => {
      const r = await cli(...args)
      assertExit(r, 2, args.join(' '))
      assert.match(r.stderr, pattern)
    }
    await usage(['list'], /--url is required/)
    await usage(on('list', '--limit', '0'), /--limit must be an integer between 1 and 1000 \(got 0\)/)
    await usage(on('list', '--cursor', 'nope'), /cursor must be a cursor returned by a previous page/)
    await usage(on('list', '--limit'), /--limit needs a value/)
    await usage(on('list', '--status', 'Done'), /--status must be one of Running, Completed, Failed, ContinuedAsNew/)
    await usage(on('list', '--frobnicate'), /unknown option --frobnicate/)
    await usage(on('list', '--json=yes'), /--json takes no value/)
    await usage(on('list', '--schema', 'other'), /--schema given more than once/)
    await usage(on('list', 'extra'), /unexpected argument "extra"/)
    await usage(on('describe'), /ID is required/)
    await usage(on('history', ids.done, '--execution', '0'), /--execution must be an integer between 1 and/)
    await usage(on('cancel', ids.done, '--wait', 'soon'), /--wait must be an integer between 0 and 3600/)
    await usage(on('dead-letters', 'show', 'abc'), /N must be an integer/)
    await usage(on('dead-letters', 'list', '--yes'), /--yes does not apply to dead-letters list/)
    await usage(on('dead-letters', 'explode'), /unknown action "explode"/)
    await usage(on('dead-letters', 'purge', '--dead-before', 'last week'), /--dead-before must be an ISO 8601 time/)
    await usage(['list', '--url', 'mysql://u@h/db'], /--url must start with postgres:\/\/, postgresql:\/\/ or sqlite:/)
    await usage(['list', '--url', DATABASE_URL, '--schema', 'bad-name'], /--schema must be 1-63 characters/)
    await usage(['frobnicate'], /unknown command "frobnicate"/)

    for (const name of ['list', 'describe', 'history', 'tree', 'cancel', 'dead-letters']) {
      const help = await cli(name, '--help')
      assertExit(help, 0, `${name} --help`)
      assert.match(help.stdout, new RegExp(`^Usage: steadfast ${name} `))
      assert.match(help.stdout, /--url URL/)
    }
    assert.match((await cli('list', '-h')).stdout, /--cursor C\s+the next page/)
    const top = await cli('--help')
    assertExit(top, 0, '--help')
    for (const name of ['list', 'describe', 'history', 'tree', 'cancel', 'dead-letters', 'doctor']) assert.match(top.stdout, new RegExp(`^  ${name} `, 'm'))
  })

  test('a missing schema exits 2 and is not created', async () => {
    const missing = `sf_cli_missing_${Date.now().toString(36)}`
    const r = await cliJson('list', '--url', DATABASE_URL, '--schema', missing)
    assertExit(r, 2, 'list on a missing schema')
    assert.equal(r.doc.error.code, 'schema')
    assert.match(r.stderr, new RegExp(`schema "${missing}" cannot be used as it is: .*never creates or migrates a schema`))
    const db = new pg.Client({ connectionString: DATABASE_URL })
    await db.connect()
    try {
      const found = await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing])
      assert.equal(found.rowCount, 0, 'the command line created the schema')
    } finally {
      await db.end()
    }
  })

  test('the password in --url is never printed', async () => {
    const withPw = new URL(DATABASE_URL)
    withPw.password = SECRET
    const closed = new URL(withPw)
    closed.hostname = '127.0.0.1'
    closed.port = '1'
    const runs = [
      [0, ['list', '--url', withPw.toString(), '--schema', backend.schema]],
      [0, ['describe', ids.done, '--json', `--url=${withPw}`, '--schema', backend.schema]],
      [2, ['list', '--url', withPw.toString(), '--schema', 'sf_cli_no_such_schema']],
      [2, ['list', '--url', closed.toString()]],
      [2, ['list', '--url', closed.toString(), '--json']],
      [2, ['list', '--url', withPw.toString(), '--limit', 'x']],
      [2, ['list', '--url', withPw.toString().replace(/^postgres(ql)?:/, 'mysql:')]],
      [2, ['list', withPw.toString()]],
      [2, ['list', '--url', withPw.toString(), withPw.toString()]],
    ]
    const results = []
    for (const [code, args] of runs) {
      const r = await cli(...args)
      assertExit(r, code, args.join(' ').replaceAll(SECRET, '***'))
      const all = r.stdout + r.stderr
      assert.ok(all.length > 0)
      assert.ok(!all.includes(SECRET), `password printed by ${args.join(' ').replaceAll(SECRET, '***')}:\n${all}`)
      results.push(r)
    }
    assert.match(results[0].stdout, new RegExp(`^${ids.done} `, 'm'))
    assert.equal(JSON.parse(results[1].stdout).instance.instanceId, ids.done)
    assert.match(results[3].stderr, /cannot open postgres(ql)?:\/\/[^:\s]+:\*\*\*@127\.0\.0\.1:1\//)
    assert.equal(JSON.parse(results[4].stdout).error.code, 'connection')
  })
})

describe('steadfast CLI on SQLite', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'steadfast-cli-'))
  const file = join(dir, 'store.db')
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('list and describe read a SQLite file; dead letters and a missing file exit 2', async () => {
    const provider = await SqliteProvider.open(file)
    const rt = new Runtime(provider, FAST)
    registerOperatorSamples(rt)
    await rt.start()
    const id = uid('sqlite')
    try {
      const client = new Client(provider)
      await client.startOrchestration(id, 'Greet', 'Grace')
      assert.equal((await client.waitForOrchestration(id, 30_000)).status, 'Completed')
    } finally {
      await rt.shutdown(2000)
    }
    const listed = await cliJson('list', '--url', `sqlite:${file}`)
    assertExit(listed, 0, 'list on sqlite')
    assert.deepEqual(listed.doc.instances.map((i) => [i.instanceId, i.status]), [[id, 'Completed']])
    const described = await cli('describe', id, '--url', `sqlite:${file}`)
    assertExit(described, 0, 'describe on sqlite')
    assert.match(described.stdout, /^Output:\s+"hello Grace"$/m)

    const dead = await cli('dead-letters', '--url', `sqlite:${file}`)
    assertExit(dead, 2, 'dead-letters on sqlite')
    assert.match(dead.stderr, /PostgreSQL provider only/)
    const absent = join(dir, 'absent.db')
    const missing = await cli('list', '--url', `sqlite:${absent}`)
    assertExit(missing, 2, 'list on a missing SQLite file')
    assert.match(missing.stderr, /there is no SQLite file at/)
    assert.equal(existsSync(absent), false, 'the command line created the SQLite file')
  })
})
