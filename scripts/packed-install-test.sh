#!/usr/bin/env bash
# Build the published packages as a release would (./scripts/package.sh: linux-x64-gnu,
# release profile) and install them into a fresh project as a user would, with no Rust
# toolchain on PATH (__test__/packed/install.test.mjs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

./scripts/package.sh
node --test --test-timeout=600000 __test__/packed/
