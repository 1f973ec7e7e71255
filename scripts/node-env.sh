# Sourced by the set-up, test and run scripts: the Node.js they use. Development and tests need Node 22 or newer
# (wrangler and the test runner); when the machine's `node` is older, the project-local Node 24 that
# scripts/setup-runtimes.sh installs (target/runtimes/node24) goes first on PATH. A machine Node 22+ is used as it is.
# The machine's npm runs on whichever node comes first.
hostpace_node_major() {
  local v
  v=$(node --version 2>/dev/null || true)
  v=${v#v}
  echo "${v%%.*}"
}
if [ "$(hostpace_node_major)" = "" ] || [ "$(hostpace_node_major)" -lt 22 ]; then
  if [ -x target/runtimes/node24/bin/node ]; then
    PATH="$PWD/target/runtimes/node24/bin:$PATH"
    export PATH
  fi
fi
unset -f hostpace_node_major
