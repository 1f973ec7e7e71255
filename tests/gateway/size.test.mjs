// The gateway Worker's wasm module stays within its budget: at most 512 KB gzipped, the deploy bundle's budget
// (`deploy.test.mjs`). Measured on the build scripts/build-worker.sh makes (worker-build --release, wasm-opt), gzip -9. The budget
// is an alarm for growth nobody chose, far below what Cloudflare accepts (3 MB gzipped on the free plan): it is
// raised only for a feature that needs the room, in the commit that adds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { root } from './gateway.mjs';

test('worker/build/index_bg.wasm is at most 512 KB gzipped', () => {
  const wasm = readFileSync(`${root}worker/build/index_bg.wasm`);
  const gz = gzipSync(wasm, { level: 9 }).length;
  assert.ok(gz <= 512 * 1000, `${gz} bytes gzipped (${wasm.length} raw)`);
});
