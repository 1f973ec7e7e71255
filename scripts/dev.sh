#!/usr/bin/env bash
# The README's run command. Until the gateway exists it runs the core's demo crawl.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --quiet --example demo
