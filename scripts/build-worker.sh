#!/usr/bin/env bash
# Build the gateway Worker (worker/, crate hostpace-worker) into worker/build/ with worker-build 0.8.7, offline:
# wasm-bindgen, wasm-opt and esbuild are the ones installed by scripts/setup.sh (worker-build would otherwise
# try to download them; see docs/TOOLCHAIN.md). wrangler.toml's [build] command runs this.
#
# A build newer than every source it comes from (worker/, the core in src/, the manifests) is kept as it is, so
# wrangler's [build] at the start of `wrangler dev` costs nothing, and an edit while it runs is rebuilt and served.
# HOSTPACE_WORKER_PREBUILT=1 skips the build whenever worker/build/ exists (the gateway tests build once, then
# start wrangler dev several times).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f worker/build/index.js ]; then
  if [ "${HOSTPACE_WORKER_PREBUILT:-}" = 1 ]; then
    exit 0
  fi
  newer=$(find worker/src worker/Cargo.toml src Cargo.toml Cargo.lock -newer worker/build/index.js -print -quit)
  if [ -z "$newer" ]; then
    echo "worker/build is up to date"
    exit 0
  fi
fi
ROOT=$PWD
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$HOME/.cargo/bin/wasm-bindgen}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$ROOT/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$ROOT/node_modules/.bin/esbuild}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$ROOT/.cache}"
cd worker
# The workspace's release profile (LTO, one codegen unit) optimised for size, with symbols stripped. The budget is
# 512 KB gzipped for the deploy bundle (tests/gateway/size.test.mjs, deploy.test.mjs): the wasm plus index.js,
# which carries the tldts Public Suffix List (about 49.5 KB gzipped). Measured (zlib level 9, wasm + index.js):
# opt-level 3, 459,171 + 57,894 = 517,065 B, past the budget; "s", 424,530 + 57,895 = 482,425 B; "z", 392,502 +
# 57,895 = 450,397 B. "s" fits, and GET /v1/fetch stays within 1.25x the workerd floor (bench/workerd-floor,
# BENCHMARKS.md).
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-s}"
export CARGO_PROFILE_RELEASE_STRIP="${CARGO_PROFILE_RELEASE_STRIP:-true}"
worker-build --release
# measured as tests/gateway/size.test.mjs measures it (zlib level 9; the gzip command's output differs by a few KB)
node -e "const z = require('zlib'), fs = require('fs'); const w = fs.readFileSync('build/index_bg.wasm');
  console.log('worker/build/index_bg.wasm: ' + z.gzipSync(w, { level: 9 }).length + ' bytes gzipped')" || true
