#!/usr/bin/env bash
# Build everything and run all tests. Exits non-zero on the first failure.
#
# Sets the machine up first (scripts/machine-setup.sh): missing system packages and
# node_modules are installed, PostgreSQL (STEADFAST_TEST_DATABASE_URL if it answers, else
# 127.0.0.1:5432, else a throwaway cluster) and a PgBouncer in front of it are started.
# Extra arguments are passed to `cargo test` before `--`, e.g. `./scripts/test.sh -p steadfast-pg`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Packages, PostgreSQL and PgBouncer: installed or started here when missing (see the script).
# shellcheck source=scripts/machine-setup.sh
source scripts/machine-setup.sh
trap cleanup_test_machine EXIT
prepare_test_machine

echo "==> cargo build --workspace --all-targets"
cargo build --workspace --all-targets

echo "==> cargo test --workspace (database: ${STEADFAST_TEST_DATABASE_URL})"
# The fault suite (crates/steadfast-faults) runs here too, two scenarios at a time.
# One retry, alone, for timing misses of duroxide's upstream validations only (see the script).
./scripts/cargo-test-upstream-retry.sh --workspace "$@" -- --test-threads=4

echo "==> Rust example app (embedded SQLite, then PostgreSQL)"
./scripts/example-rust.sh
./scripts/example-rust.sh --database-url "$STEADFAST_TEST_DATABASE_URL"

echo "==> Node binding: npm test, typings, Node example app (SQLite, then PostgreSQL)"
./scripts/node-test.sh

echo "==> published packages: release build, pack, install into a fresh project, quickstarts"
./scripts/packed-install-test.sh

echo "==> benchmarks, smoke version (keeps them working; numbers are not checked)"
./target/debug/steadfast-bench --smoke --out target/bench-smoke.json

echo "==> Node benchmarks, smoke version (binding vs Rust baseline, DBOS peer)"
# bench/node has its own package.json (DBOS is a bench-only dependency); the debug addon and
# steadfast-node-baseline come from the workspace build above.
[[ -d bench/node/node_modules ]] || (cd bench/node && npm ci --no-audit --no-fund)
node bench/node/bench.mjs --smoke --out target/bench-node-smoke.json

echo "==> all tests passed"
