#!/usr/bin/env bash
# Build the Node addon (debug) with the workspace's own cargo and install it as
# steadfast.linux-x64-gnu.node, where the generated index.js loader looks first.
#
# `napi build` would pass `--target` and so rebuild every dependency in a second target
# directory; this reuses target/debug. The copy goes to a temporary name and is renamed over
# the old file, so a Node process that has the old addon loaded (or is loading it right now)
# never sees a half-written library. Linux x64 only. Installs node_modules first when missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ -d node_modules ]] || npm ci --no-audit --no-fund
cargo build -p steadfast-node
tmp="$(mktemp steadfast.linux-x64-gnu.node.XXXXXX)"
trap 'rm -f "$tmp"' EXIT
cp target/debug/libsteadfast_node.so "$tmp"
chmod 644 "$tmp"
mv -f "$tmp" steadfast.linux-x64-gnu.node
trap - EXIT
