#!/usr/bin/env bash
# Every test of the project. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

step "format"
cargo fmt --all -- --check
step "clippy (all targets, warnings are errors)"
cargo clippy --all-targets -- -D warnings
step "docs (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
step "benchmarks compile"
cargo bench --no-run --quiet
step "Rust tests (unit, integration, property, doc)"
cargo test
