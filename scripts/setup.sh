#!/usr/bin/env bash
# Install, idempotently, everything the run and test commands need on a fresh machine.
# Reaches only the package registries (crates.io, npm, Debian) and rustup's own server; see
# docs/TOOLCHAIN.md for why each pin is what it is.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen crate in Cargo.lock, exactly

log() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

# Rust: the machine's toolchain (rustup) with clippy, rustfmt and the wasm target.
if ! command -v cargo >/dev/null; then
  echo "setup: cargo not found; this project needs the rustup toolchain of the machine image" >&2
  exit 1
fi
for component in clippy rustfmt; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^${component}"; then
    log "rustup component add ${component}"
    rustup component add "${component}"
  fi
done
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen CLI (and its test runner), pinned to the crate's version. Without --locked: its lock file names
# a crate version the registry does not serve.
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen ${WASM_BINDGEN_VERSION}" ]; then
  log "cargo install wasm-bindgen-cli ${WASM_BINDGEN_VERSION} (about 2 minutes)"
  cargo install wasm-bindgen-cli --version "${WASM_BINDGEN_VERSION}" --force
fi

# worker-build, pinned: builds the gateway Worker (scripts/build-worker.sh, offline: it is given wasm-bindgen,
# wasm-opt and esbuild instead of downloading them).
WORKER_BUILD_VERSION=0.8.7
if [ "$(worker-build --version 2>/dev/null || true)" != "${WORKER_BUILD_VERSION}" ]; then
  log "cargo install worker-build ${WORKER_BUILD_VERSION} (about 4 minutes)"
  cargo install worker-build --version "${WORKER_BUILD_VERSION}" --locked --force
fi

# The JavaScript runtimes the package is smoke-tested on (Node 20, 22, 24, 26, Deno 2, Bun 1), from the npm
# registry into target/runtimes/; the machine's own Node is left as it is.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: node and npm not found; this project needs Node.js (22 or newer, or any Node with npm to install it)" >&2
  exit 1
fi
scripts/setup-runtimes.sh

# The Node the project runs on: the machine's when it is 22 or newer, else target/runtimes/node24.
. scripts/node-env.sh
log "node $(node --version) ($(command -v node))"

# Node packages (wrangler, binaryen's wasm-opt, TypeScript, Playwright's driver, Crawlee, the benchmark's peers).
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

# Chromium and ChromeDriver from Debian, for browser tests (never a browser download of a test tool).
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install chromium chromium-driver"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "setup: /usr/bin/chromium and /usr/bin/chromedriver are needed: apt-get install chromium chromium-driver" >&2
    exit 1
  fi
fi

# nginx from Debian: a real `limit_req` server as the target of tests/js/nginx.test.mjs and bench/nginx.mjs, which
# start their own nginx (own config, prefix and port on 127.0.0.1) and stop it by PID. The package's service is
# not used: if its install started one (a machine whose policy-rc.d allows it), it is stopped by its PID file.
if [ ! -x /usr/sbin/nginx ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install nginx"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
    if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
      log "stopping the nginx service the package started (PID $(cat /run/nginx.pid))"
      kill -QUIT "$(cat /run/nginx.pid)" || true
    fi
  else
    echo "setup: /usr/sbin/nginx is needed: apt-get install nginx" >&2
    exit 1
  fi
fi

# redis-server from Debian: the real store of tests/js/redis-store.test.mjs (hostpace/redis with ioredis, iovalkey
# and node-redis), tests/js/shared-fleet.test.mjs, the README's shared crawler and bench/redis.mjs, each of which
# starts its own /usr/bin/redis-server (no persistence, own folder and port on 127.0.0.1; tests/support/redis.mjs)
# and stops it by PID. The package's service is not used: if its install started one (a
# machine whose policy-rc.d allows it), it is stopped by its PID file.
if [ ! -x /usr/bin/redis-server ]; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install redis-server"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
    if [ -s /run/redis/redis-server.pid ] && kill -0 "$(cat /run/redis/redis-server.pid)" 2>/dev/null; then
      log "stopping the redis-server service the package started (PID $(cat /run/redis/redis-server.pid))"
      kill -TERM "$(cat /run/redis/redis-server.pid)" || true
    fi
  else
    echo "setup: /usr/bin/redis-server is needed: apt-get install redis-server" >&2
    exit 1
  fi
fi

# Fetch crates once, so that later steps fail early and clearly if the registry is unreachable.
cargo fetch --quiet
log "ready"
