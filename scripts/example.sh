#!/usr/bin/env bash
# Run the Node example app (examples/node-app/main.mjs): builds the addon first, so it works on
# a fresh clone. Embedded SQLite by default; pass `--database-url postgres://...` (or set
# STEADFAST_DATABASE_URL) for PostgreSQL. The Rust example is ./scripts/example-rust.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/build-addon.sh >&2
exec node examples/node-app/main.mjs "$@"
