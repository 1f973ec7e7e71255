#!/usr/bin/env bash
# Every test of the project. This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/node-env.sh   # Node 22+ (the machine's, or target/runtimes/node24)

step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export CHROMEDRIVER=/usr/bin/chromedriver

step "format"
cargo fmt --all -- --check
step "clippy (native and wasm, all targets, warnings are errors)"
cargo clippy --all-targets -- -D warnings
cargo clippy --lib --features wasm --target wasm32-unknown-unknown -- -D warnings
step "docs (every public item documented, no broken links)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
step "benchmarks compile"
cargo bench --no-run --quiet
step "Rust tests (unit, integration, property, doc)"
cargo test
step "wasm tests in Node"
cargo test --target wasm32-unknown-unknown --features wasm --lib
step "wasm tests in headless Chromium"
WASM_BINDGEN_USE_BROWSER=1 cargo test --target wasm32-unknown-unknown --features wasm --lib
step "npm package build"
npm run --silent build:pkg
step "npm package tests in Node (real HTTP origin on 127.0.0.1)"
# every node --test run: no test file takes 10 minutes, so one still running at 15 (a hang) is cancelled and named
# instead of holding the run
# one test file at a time: the files measure arrival times at real origins, and on a 2-core machine files
# running side by side (Chromium, workerd) delay each other's origins by tens of milliseconds
node --test --test-timeout=900000 --test-concurrency=1 tests/js/*.test.mjs
step "npm package on Node 20, 22, 24 and 26, Deno 2 and Bun 1 (the packed tarball, origins on 127.0.0.1)"
node --test --test-timeout=900000 tests/runtimes/*.test.mjs
step "playground in headless Chromium (www/ with www/pkg from the package build; screenshots in target/playground-screenshots)"
node --test --test-timeout=900000 tests/playground/*.test.mjs
step "edge gateway: hostpace-worker (clippy native + wasm32, docs, native unit tests), Worker build, end-to-end in workerd"
# the worker crate is not a default member of the workspace commands above (the root package is): checked here
cargo clippy -p hostpace-worker --all-targets -- -D warnings
cargo clippy -p hostpace-worker --target wasm32-unknown-unknown -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p hostpace-worker --no-deps --quiet
cargo test -p hostpace-worker
scripts/build-worker.sh
# wrangler dev (workerd) on 127.0.0.1, real origins on 127.0.0.1; one file at a time (they measure arrival times)
node --test --test-timeout=900000 --test-concurrency=1 tests/gateway/*.test.mjs
step "README.md: every code block, run as written (the install, the first programs, scripts/dev.sh, deploy --dry-run)"
node --test --test-timeout=900000 --test-concurrency=1 tests/readme/*.test.mjs
