'use strict'

// `steadfast tree ID`: an instance and its sub-orchestrations, drawn as an indented tree.

const { INSTANCE_ID_ONLY } = require('../args')
const { instanceInfo, instanceInfoIfPresent } = require('../instances')
const { renderTable, count } = require('../table')

/** Instances whose details are read; a larger tree is cut, and says so. */
const MAX_NODES = 1000

const USAGE = `Usage: steadfast tree ID --url URL [--json]

Instance ID and all its sub-orchestrations (and theirs), each with its orchestration, version
and status, children under their parent in the order they were created. The details of at
most ${MAX_NODES} instances are read; a larger tree is cut and says how many it left out.`

function node(info) {
  return {
    instanceId: info.instanceId,
    orchestrationName: info.orchestrationName,
    orchestrationVersion: info.orchestrationVersion,
    status: info.status,
    createdAt: info.createdAt,
    children: [],
  }
}

/**
 * Nest `infos` under `root` by parentInstanceId. An instance whose parent was not read (cut
 * off, or gone meanwhile) hangs under the root, so nothing read is left out.
 */
function nest(root, infos) {
  const byId = new Map([[root.instanceId, root]])
  for (const info of infos) byId.set(info.instanceId, node(info))
  for (const info of infos) {
    const parent = byId.get(info.parentInstanceId) ?? root
    parent.children.push(byId.get(info.instanceId))
  }
  const order = (a, b) => a.createdAt - b.createdAt || (a.instanceId < b.instanceId ? -1 : 1)
  for (const n of byId.values()) n.children.sort(order)
  return root
}

/** Rows of the tree, depth first, the id column drawn with branch lines. */
function rows(n, prefix = '', branch = '') {
  const out = [[`${prefix}${branch}${n.instanceId}`, n.orchestrationName, n.orchestrationVersion, n.status]]
  const inner = prefix + (branch === '' ? '' : branch === '└─ ' ? '   ' : '│  ')
  n.children.forEach((c, i) => out.push(...rows(c, inner, i === n.children.length - 1 ? '└─ ' : '├─ ')))
  return out
}

function render({ size, omitted, tree }) {
  const table = renderTable(['INSTANCE', 'NAME', 'VERSION', 'STATUS'], rows(tree))
  const footer = omitted > 0 ? `${count(size, 'instance')}, ${omitted} not shown (more than ${MAX_NODES}).` : `${count(size, 'instance')}.`
  return `${table}\n${footer}\n`
}

module.exports = {
  name: 'tree',
  usage: USAGE,
  ...INSTANCE_ID_ONLY,
  async run(client, { id }) {
    const root = node(await instanceInfo(client, id))
    const tree = await client.getInstanceTree(id)
    const descendants = tree.allIds.filter((d) => d !== id)
    const infos = []
    for (const d of descendants.slice(0, MAX_NODES - 1)) {
      const info = await instanceInfoIfPresent(client, d)
      if (info) infos.push(info)
    }
    const result = { rootId: id, size: tree.size, omitted: tree.size - 1 - infos.length, tree: nest(root, infos) }
    return { json: result, text: render(result) }
  },
}
