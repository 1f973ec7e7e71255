#!/usr/bin/env bash
# Install, idempotently, everything the run and test commands need on a fresh machine.
# Reaches only the package registries (crates.io, npm, Debian); see ../shared/TOOLCHAIN.md.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1msetup:\033[0m %s\n' "$*"; }

# Rust: the machine's toolchain (rustup) with clippy and rustfmt.
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

# Fetch crates once, so that later steps fail early and clearly if the registry is unreachable.
cargo fetch --quiet
log "ready"
