// The package's size budget: its wasm module, gzipped (level 9), is at most 128 KB (128,000 bytes), which is what
// a browser, a Worker or a serverless function downloads and compiles before its first decision. The Public
// Suffix List of groupBy 'site' stays out of the module (psl.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 128_000;

test(`pkg/hostpace_bg.wasm is at most ${BUDGET} bytes gzipped`, () => {
  const wasm = readFileSync(new URL('../../pkg/hostpace_bg.wasm', import.meta.url));
  const gzipped = gzipSync(wasm, { level: 9 }).length;
  console.log(`hostpace_bg.wasm: ${wasm.length} bytes, ${gzipped} bytes gzipped (budget ${BUDGET})`);
  assert.ok(gzipped <= BUDGET, `${gzipped} bytes gzipped is over the ${BUDGET}-byte budget`);
});
