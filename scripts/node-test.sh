#!/usr/bin/env bash
# Build the Node addon (debug) and run the Node tests (node --test, __test__/).
#
# Uses the workspace's own cargo build of the cdylib instead of `napi build`, which always
# passes `--target` and so rebuilds every dependency in a second target directory. The
# committed index.js / index.d.ts come from `npx napi build --platform`; rerun that after
# changing a #[napi] signature. Linux x64 only (the copy names the linux-x64-gnu binary).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export STEADFAST_TEST_DATABASE_URL="${STEADFAST_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

[[ -d node_modules ]] || npm ci --no-audit --no-fund
cargo build -p steadfast-node
cp target/debug/libsteadfast_node.so steadfast.linux-x64-gnu.node
npm test

echo "==> TypeScript typings: tsc --noEmit"
npm run typecheck

echo "==> Node example app (embedded SQLite, then PostgreSQL)"
node examples/node-app/main.mjs
node examples/node-app/main.mjs --database-url "$STEADFAST_TEST_DATABASE_URL"
