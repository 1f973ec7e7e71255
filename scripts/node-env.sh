# Sourced by the set-up, test and run scripts (and by you, from the repository's root): the Node.js they use.
# Development and tests need Node 22.12 or newer (wrangler and the test runner); when the machine's `node` is
# older, the project-local Node 24 that scripts/setup-runtimes.sh installs (target/runtimes/node24) goes first on
# PATH. A machine Node 22.12+ is used as it is. The machine's npm runs on whichever node comes first.
hostpace_node24="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/runtimes/node24/bin"
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) ? 0 : 1)' 2>/dev/null; then
  if [ -x "$hostpace_node24/node" ]; then
    PATH="$hostpace_node24:$PATH"
    export PATH
  else
    echo "node-env: Node $(node --version 2>/dev/null || echo '(none)') is older than 22.12 and $hostpace_node24 is missing: run scripts/setup.sh" >&2
  fi
fi
unset hostpace_node24
