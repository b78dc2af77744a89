#!/usr/bin/env bash
# Build everything and run all tests. Exits non-zero on the first failure.
#
# The PostgreSQL tests connect to STEADFAST_TEST_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/test). Extra arguments are passed
# to `cargo test` before `--`, e.g. `./scripts/test.sh -p steadfast-pg`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export STEADFAST_TEST_DATABASE_URL="${STEADFAST_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"

echo "==> cargo build --workspace --all-targets"
cargo build --workspace --all-targets

echo "==> cargo test --workspace (database: ${STEADFAST_TEST_DATABASE_URL})"
cargo test --workspace --exclude steadfast-faults "$@" -- --test-threads=4

# The fault suite starts worker processes and throwaway PostgreSQL clusters of its own;
# two tests at a time keep it inside a 2-core CI machine (docs/faults.md).
echo "==> fault suite: cargo test -p steadfast-faults"
cargo test -p steadfast-faults -- --test-threads=2

echo "==> example app (embedded SQLite, then PostgreSQL)"
./scripts/example.sh
./scripts/example.sh --database-url "$STEADFAST_TEST_DATABASE_URL"

echo "==> Node binding: npm test"
./scripts/node-test.sh

echo "==> benchmarks, smoke version (keeps them working; numbers are not checked)"
./target/debug/steadfast-bench --smoke --out target/bench-smoke.json

echo "==> all tests passed"
