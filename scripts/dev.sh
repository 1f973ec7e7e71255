#!/usr/bin/env bash
# The README's run command: builds everything (the npm package the playground loads, the gateway Worker) and
# starts the gateway with wrangler dev on http://127.0.0.1:8787, Durable Object state on local disk
# (.wrangler/state), printing the dev token and the playground's URL. Ctrl-C stops it.
#   scripts/dev.sh                  public targets only (as deployed)
#   scripts/dev.sh --allow-local    also 127.0.0.1, ::1 and other private addresses (CRAWL_ALLOW_PRIVATE_TARGETS)
set -euo pipefail
cd "$(dirname "$0")/.."

extra=()
targets="public hosts only (scripts/dev.sh --allow-local to reach 127.0.0.1 and private addresses)"
for arg in "$@"; do
  case "$arg" in
    --allow-local)
      extra+=(--var CRAWL_ALLOW_PRIVATE_TARGETS:true)
      targets="public hosts, and 127.0.0.1, ::1 and private addresses (--allow-local)"
      ;;
    -h | --help)
      sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "scripts/dev.sh: unknown option $arg (try --help)" >&2
      exit 2
      ;;
  esac
done

scripts/setup.sh
. scripts/node-env.sh              # Node 22+ (the machine's, or target/runtimes/node24)

npm run --silent build:pkg        # pkg/ and www/pkg (the playground's wasm module)
scripts/build-worker.sh           # worker/build (wrangler's [build] runs it again when worker/src or src change)

# A local token in the ignored .dev.vars (wrangler dev reads it as the GATEWAY_TOKEN secret).
if ! grep -q '^GATEWAY_TOKEN=' .dev.vars 2>/dev/null; then
  token=$(node -e "process.stdout.write(require('node:crypto').randomBytes(24).toString('hex'))")
  umask 077
  printf 'GATEWAY_TOKEN=%s\n' "$token" > .dev.vars
fi
TOKEN=$(sed -n 's/^GATEWAY_TOKEN=//p' .dev.vars | head -1)
# and a local operators' token (GATEWAY_ADMIN_TOKEN, label:token) for the admin routes (/v1/admin/hosts)
if ! grep -q '^GATEWAY_ADMIN_TOKEN=' .dev.vars; then
  admin=$(node -e "process.stdout.write(require('node:crypto').randomBytes(24).toString('hex'))")
  umask 077
  printf 'GATEWAY_ADMIN_TOKEN=dev:%s\n' "$admin" >> .dev.vars
fi
ADMIN_TOKEN=$(sed -n 's/^GATEWAY_ADMIN_TOKEN=dev://p' .dev.vars | head -1)

# wrangler quiet and offline; its config and logs inside the ignored .wrangler/
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
export XDG_CONFIG_HOME="$PWD/.wrangler/config" WRANGLER_LOG_PATH="$PWD/.wrangler/logs"

cat <<MSG

  hostpace gateway  http://127.0.0.1:8787
  playground        http://127.0.0.1:8787/
  dev token         $TOKEN      (in .dev.vars)
  admin token       ${ADMIN_TOKEN:-(GATEWAY_ADMIN_TOKEN in .dev.vars)}      (label dev; the operators' rules, /v1/admin/hosts)
  targets           $targets
  edits             to worker/src or src are rebuilt and served while this runs (wrangler's first
                    "The file worker/src,src changed" line is its start-up build: worker/build is up to date)

  curl -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:8787/v1/fetch?url=https%3A%2F%2Fexample.com%2F'

MSG
exec node_modules/.bin/wrangler dev --ip 127.0.0.1 --port 8787 --persist-to .wrangler/state ${extra[@]+"${extra[@]}"}
