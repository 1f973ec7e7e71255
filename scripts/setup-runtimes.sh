#!/usr/bin/env bash
# Install, idempotently, the JavaScript runtimes the npm package is smoke-tested on (tests/runtimes/): Node 20, 22,
# 24 and 26, Deno 2 and Bun 1, each into its own folder target/runtimes/<name>, from the npm registry only. The
# machine's global Node is never changed. Each folder gets bin/<executable>, a link to the runtime's binary, which
# the tests run. A runtime that cannot be installed here stops the script with an error naming it.
#
# Where the binaries come from (each a real executable shipped inside a registry package):
#   Node  node-linux-<arch>@<version>: the package the `node` npm package itself installs from its preinstall
#         script; taken directly, it needs no install script and has every release (the `node` package lags).
#   Deno  deno@<version>, whose optional dependency @deno/linux-<arch>-glibc holds the binary.
#   Bun   bun@<version>, whose optional dependency @oven/bun-linux-<arch> holds the binary (on an x64 processor
#         without AVX2, @oven/bun-linux-x64-baseline is installed and used instead).
# Install scripts are not run (--ignore-scripts): the binaries are used where their platform packages put them.
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest release of each major line that installs and runs here (exact pins).
NODE20_VERSION=20.20.2   # installed only when the machine's own node is not a 20.x
NODE22_VERSION=22.23.5
NODE24_VERSION=24.22.3
NODE26_VERSION=26.12.1
DENO_VERSION=2.9.6
BUN_VERSION=1.4.5

ROOT=target/runtimes

log() { printf '\033[1msetup-runtimes:\033[0m %s\n' "$*"; }
die() {
  printf '\033[1msetup-runtimes: error:\033[0m %s\n' "$*" >&2
  exit 1
}

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ARCH=x64 ;;
  Linux-aarch64) ARCH=arm64 ;;
  *) die "no runtime packages are pinned for $(uname -s) $(uname -m) (Linux x64 and arm64 only)" ;;
esac

# The first line of `<binary> --version`, or nothing when the binary is missing or does not run.
version_of() {
  [ -x "$1" ] && "$1" --version 2>/dev/null | head -n 1 || true
}

# ensure NAME LABEL EXE WANT PATH_IN_PREFIX PACKAGE...
# Install PACKAGE... into target/runtimes/NAME unless bin/EXE there already reports a version line containing WANT;
# link bin/EXE to PATH_IN_PREFIX (the binary inside the installed packages), then check that it runs.
ensure() {
  local name=$1 label=$2 exe=$3 want=$4 binary=$5
  shift 5
  local dir="$ROOT/$name"
  if [[ "$(version_of "$dir/bin/$exe")" != *"$want"* ]]; then
    log "installing $label into $dir: npm install $*"
    rm -rf "$dir"
    mkdir -p "$dir/bin"
    if ! npm install --prefix "$dir" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error "$@"; then
      die "$label could not be installed from the npm registry (npm install $*)"
    fi
    [ -x "$dir/$binary" ] || die "$label: npm installed $*, but $dir/$binary is not there"
    ln -sfn "../$binary" "$dir/bin/$exe"
  fi
  local got
  got="$(version_of "$dir/bin/$exe")"
  [[ "$got" == *"$want"* ]] || die "$label: $dir/bin/$exe reports '${got:-nothing}', expected $want"
}

# Node 20: the machine's own node when it is a 20.x, else a pinned one like the others.
mkdir -p "$ROOT"
machine_node="$(command -v node || true)"
if [ -n "$machine_node" ] && [[ "$(node --version)" == v20.* ]]; then
  rm -rf "$ROOT/node20" && mkdir -p "$ROOT/node20/bin"
  ln -sfn "$(readlink -f "$machine_node")" "$ROOT/node20/bin/node"
else
  ensure node20 "Node $NODE20_VERSION" node "v$NODE20_VERSION" "node_modules/node-linux-$ARCH/bin/node" \
    "node-linux-$ARCH@$NODE20_VERSION"
fi
ensure node22 "Node $NODE22_VERSION" node "v$NODE22_VERSION" "node_modules/node-linux-$ARCH/bin/node" \
  "node-linux-$ARCH@$NODE22_VERSION"
ensure node24 "Node $NODE24_VERSION" node "v$NODE24_VERSION" "node_modules/node-linux-$ARCH/bin/node" \
  "node-linux-$ARCH@$NODE24_VERSION"
ensure node26 "Node $NODE26_VERSION" node "v$NODE26_VERSION" "node_modules/node-linux-$ARCH/bin/node" \
  "node-linux-$ARCH@$NODE26_VERSION"
ensure deno2 "Deno $DENO_VERSION" deno "deno $DENO_VERSION " "node_modules/@deno/linux-$ARCH-glibc/deno" \
  "deno@$DENO_VERSION"
# Bun's x64 build needs AVX2; its "baseline" build runs on any x64 processor.
if [ "$ARCH" = x64 ] && ! grep -qw avx2 /proc/cpuinfo; then
  ensure bun1 "Bun $BUN_VERSION" bun "$BUN_VERSION" "node_modules/@oven/bun-linux-x64-baseline/bin/bun" \
    "bun@$BUN_VERSION" "@oven/bun-linux-x64-baseline@$BUN_VERSION"
else
  ensure bun1 "Bun $BUN_VERSION" bun "$BUN_VERSION" "node_modules/@oven/bun-linux-$ARCH/bin/bun" \
    "bun@$BUN_VERSION"
fi

# What the tests will run: each runtime's binary and its version.
for entry in node20/node node22/node node24/node node26/node deno2/deno bun1/bun; do
  link="$ROOT/${entry%/*}/bin/${entry#*/}"
  printf '%-7s %s -> %s  %s\n' "${entry%/*}" "$link" "$(readlink -f "$link")" "$(version_of "$link")"
done
log "ready"
