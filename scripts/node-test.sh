#!/usr/bin/env bash
# Build the Node addon (debug, scripts/build-addon.sh) and run the Node tests (node --test,
# __test__/), the typings check and the Node example app on SQLite and PostgreSQL.
#
# The committed index.js / index.d.ts come from `npx napi build --platform`; rerun that after
# changing a #[napi] signature. Linux x64 only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export STEADFAST_TEST_DATABASE_URL="${STEADFAST_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

./scripts/build-addon.sh
npm test

echo "==> TypeScript typings: tsc --noEmit"
npm run typecheck

echo "==> Node example app (embedded SQLite, then PostgreSQL)"
./scripts/example.sh
./scripts/example.sh --database-url "$STEADFAST_TEST_DATABASE_URL"
