#!/usr/bin/env bash
# Run the Rust example app (examples/rust-app, package steadfast-example). Embedded SQLite by
# default; pass `--database-url postgres://...` (or set STEADFAST_DATABASE_URL) for PostgreSQL.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run -q -p steadfast-example -- "$@"
