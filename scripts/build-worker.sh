#!/usr/bin/env bash
# Build the gateway Worker (worker/, crate hostpace-worker) into worker/build/ with worker-build 0.8.7, offline:
# wasm-bindgen, wasm-opt and esbuild are the ones installed by scripts/setup.sh (worker-build would otherwise
# try to download them; see docs/TOOLCHAIN.md). wrangler.toml's [build] command runs this.
#
# HOSTPACE_WORKER_PREBUILT=1 skips the build when worker/build/ exists (the gateway tests build once, then start
# wrangler dev several times).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${HOSTPACE_WORKER_PREBUILT:-}" = 1 ] && [ -f worker/build/index.js ]; then
  exit 0
fi
ROOT=$PWD
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$HOME/.cargo/bin/wasm-bindgen}"
export WASM_OPT_BIN="${WASM_OPT_BIN:-$ROOT/node_modules/.bin/wasm-opt}"
export ESBUILD_BIN="${ESBUILD_BIN:-$ROOT/node_modules/.bin/esbuild}"
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$ROOT/.cache}"
cd worker
# size: the workspace release profile is tuned for speed (opt-level 3); the Worker is built for size instead
export CARGO_PROFILE_RELEASE_OPT_LEVEL="${CARGO_PROFILE_RELEASE_OPT_LEVEL:-z}"
export CARGO_PROFILE_RELEASE_STRIP="${CARGO_PROFILE_RELEASE_STRIP:-true}"
worker-build --release
gzip -9 -c build/index_bg.wasm 2>/dev/null | wc -c | awk '{printf "worker/build/index_bg.wasm: %d bytes gzipped\n", $1}' || true
