#!/usr/bin/env bash
# Build the npm package `hostpace` into pkg/: cargo (wasm32, feature wasm) → wasm-bindgen (web target, one glue
# file) → wasm-opt (npm binaryen, never Debian's) → entry points per environment, package.json.
#
# Size (budget: 128 KB gzipped, tests/js/size.test.mjs): built by stable Rust in the `wasm-release` profile
# (the release profile's LTO and one codegen unit, with `panic = "abort"` and `opt-level = "z"`: at "s" the module
# is about 129.7 KB gzipped, past the budget; "z" makes it about 121.1 KB, and batched decisions slower, as
# docs/TOOLCHAIN.md says), then `wasm-opt -Os --converge --low-memory-unused` (Rust's linker keeps the first MiB
# for the stack, so the low 1 KiB is never used), with functions called from one place inlined only up to 30 bytes
# (inlined whatever their size, the module is about 3.9 KB larger gzipped: one large function compresses worse
# than its parts), and the `target_features` section (read by linkers, not by engines) left out.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=pkg
PROFILE=wasm-release

# Source paths in the module (panic locations) name no machine: the registry's and the checkout's are cut, so the
# module is the same bytes, and size, wherever it is built.
REGISTRY="${CARGO_HOME:-$HOME/.cargo}/registry/src/index.crates.io-1949cf8c6b5b557f/"
RUSTFLAGS="--remap-path-prefix=$REGISTRY= --remap-path-prefix=$PWD/=" \
  cargo build --quiet --lib --target wasm32-unknown-unknown --features wasm --profile "$PROFILE" --target-dir target/pkg
rm -rf "$OUT" && mkdir -p "$OUT"
wasm-bindgen "target/pkg/wasm32-unknown-unknown/$PROFILE/hostpace.wasm" --target web --out-dir "$OUT" --out-name hostpace
node_modules/.bin/wasm-opt -Os --converge --one-caller-inline-max-function-size=30 --low-memory-unused --strip-debug --strip-producers --strip-target-features \
  --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory \
  --enable-multivalue --enable-reference-types \
  "$OUT/hostpace_bg.wasm" -o "$OUT/hostpace_bg.wasm"

# The JS half: a class per class of the core, each holding its wasm object (limiter.js, frontier.js, ...), the
# public surface they make (api.js), the request lifecycle of Limiter and GatewayLimiter (lifecycle.js, turns.js),
# SharedLimiter (a fleet sharing each host's budget through a store), GatewayLimiter (plain JS, nothing in the
# wasm), hostpace/crawlee (Crawlee 3 crawlers paced by a Limiter) and hostpace/redis (a shared store on a Redis or
# Valkey client; plain JS). SharedLimiter and hostpace/redis bound their store calls with deadlines.js.
for js in api answer deadlines limiter shared-limiter frontier token-bucket leaky-bucket sliding-window host-limiter \
  lifecycle turns gateway crawlee redis; do
  cp "src/wasm/$js.js" "$OUT/"
done
cp src/wasm/gateway.d.ts src/wasm/shared-limiter.d.ts src/wasm/crawlee.d.ts src/wasm/redis.d.ts "$OUT/"

# The Public Suffix List of `groupBy: 'site'`, kept out of the wasm module: src/wasm/psl.js bundled with tldts (a
# devDependency, pinned) into psl.js, one minified ESM file that imports nothing, so the package has no bare import
# (Node, Deno, Bun, Workers, and browsers without a bundler load it as it is). tldts's license (MIT, the same text
# for tldts and tldts-core) heads the file. Each entry point hands its `registrableDomain` to the module; the list
# inside is built on its first lookup (see src/wasm/psl.js).
PSL_LICENSE=$(node -e "
const fs = require('fs');
const version = (name) => JSON.parse(fs.readFileSync('node_modules/' + name + '/package.json', 'utf8')).version;
const license = (name) => fs.readFileSync('node_modules/' + name + '/LICENSE', 'utf8').trim();
if (license('tldts') !== license('tldts-core')) throw new Error('tldts and tldts-core differ in license: keep both');
if (license('tldts').includes('*/')) throw new Error('the license text would end its comment');
console.log('/*! The Public Suffix List of groupBy \\'site\\': tldts ' + version('tldts') + ' and tldts-core ' +
  version('tldts-core') + ' (https://github.com/remusao/tldts), bundled. MIT License:\\n\\n' + license('tldts') + '\\n*/');
")
node_modules/.bin/esbuild src/wasm/psl.js --bundle --format=esm --minify --platform=neutral --main-fields=module,main \
  --legal-comments=none --log-level=warning --banner:js="$PSL_LICENSE" --outfile="$OUT/psl.js"

# Entry points: the same public surface (api.js), once the module is initialised the way each environment loads it.
# Each hands the module the Public Suffix List of groupBy 'site' (psl.js) once it is initialised.
cat > "$OUT/node.js" <<'JS'
// Node: ESM, initialised synchronously from the package's own file, so no init step is needed.
import { readFileSync } from 'node:fs';
import { initSync, setPublicSuffixList } from './hostpace.js';
import { registrableDomain } from './psl.js';
initSync({ module: readFileSync(new URL('./hostpace_bg.wasm', import.meta.url)) });
setPublicSuffixList(registrableDomain);
export * from './api.js';
JS
cat > "$OUT/workerd.js" <<'JS'
// workerd / Cloudflare Workers (wrangler imports .wasm as a compiled WebAssembly.Module).
import wasmModule from './hostpace_bg.wasm';
import { initSync, setPublicSuffixList } from './hostpace.js';
import { registrableDomain } from './psl.js';
initSync({ module: wasmModule });
setPublicSuffixList(registrableDomain);
export * from './api.js';
JS
cat > "$OUT/browser.js" <<'JS'
// Browsers and bundlers: fetched next to this file, initialised by top-level await.
import init, { setPublicSuffixList } from './hostpace.js';
import { registrableDomain } from './psl.js';
await init({ module_or_path: new URL('./hostpace_bg.wasm', import.meta.url) });
setPublicSuffixList(registrableDomain);
export * from './api.js';
JS
cat > "$OUT/index.d.ts" <<'TS'
/// <reference lib="esnext.disposable" />
export * from './hostpace.js';
export * from './gateway.js';
export * from './shared-limiter.js';
TS
for entry in node workerd browser; do cp "$OUT/index.d.ts" "$OUT/$entry.d.ts"; done

VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
# sideEffects: the files a bundler must keep when nothing is imported from them: the entry points alone, which
# initialise the module (every other file only defines; tests/js/package.test.mjs bundles each entry point with
# esbuild and runs the bundle).
cat > "$OUT/package.json" <<JSON
{
  "name": "hostpace",
  "version": "$VERSION",
  "description": "Politeness rate limiter for web crawlers: per-host pacing (token bucket, leaky bucket, quota, Retry-After, robots Crawl-delay), compiled from Rust to WebAssembly",
  "license": "MIT OR Apache-2.0",
  "type": "module",
  "sideEffects": ["./node.js", "./browser.js", "./workerd.js"],
  "types": "./index.d.ts",
  "main": "./node.js",
  "exports": {
    ".": {
      "types": "./index.d.ts",
      "workerd": "./workerd.js",
      "node": "./node.js",
      "browser": "./browser.js",
      "default": "./browser.js"
    },
    "./crawlee": {
      "types": "./crawlee.d.ts",
      "default": "./crawlee.js"
    },
    "./redis": {
      "types": "./redis.d.ts",
      "default": "./redis.js"
    },
    "./hostpace_bg.wasm": "./hostpace_bg.wasm",
    "./package.json": "./package.json"
  },
  "files": ["*.js", "*.d.ts", "hostpace_bg.wasm", "snippets/**", "README.md", "CHANGELOG.md", "LICENSE-MIT", "LICENSE-APACHE"],
  "keywords": ["crawler", "rate-limiter", "politeness", "robots.txt", "retry-after", "token-bucket", "wasm"],
  "engines": { "node": ">=20" }
}
JSON
cp README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$OUT/"
rm -f "$OUT/.gitignore"
# measured as tests/js/size.test.mjs measures it (zlib level 9; the gzip command's output differs)
node -e "const z = require('zlib'), fs = require('fs');
  for (const f of ['hostpace_bg.wasm', 'psl.js']) {
    const b = fs.readFileSync('$OUT/' + f);
    console.log('pkg/' + f + ': ' + b.length + ' bytes, ' + z.gzipSync(b, { level: 9 }).length + ' bytes gzipped');
  }"

# The installable tarball, as `npm pack` makes it: target/npm/hostpace-<version>.tgz (`npm i` that path)
mkdir -p target/npm
rm -f target/npm/hostpace-*.tgz
npm pack --silent --pack-destination target/npm "./$OUT" >/dev/null
echo "target/npm/hostpace-$VERSION.tgz"

# The playground (www/) loads the same module from www/pkg (ignored by git); the gateway serves www/ at /.
rm -rf www/pkg
mkdir -p www/pkg
cp -r "$OUT"/. www/pkg/
