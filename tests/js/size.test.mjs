// The package's size budget: its wasm module, gzipped (level 9), is at most 140 KB (140,000 bytes). Politeness
// groups (groupBy 'site': the site's state beside each host's, and the config that sets it) cost about 11 KB of
// it; the Public Suffix List they read stays out of the module (psl.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const BUDGET = 140_000;

test(`pkg/hostpace_bg.wasm is at most ${BUDGET} bytes gzipped`, () => {
  const wasm = readFileSync(new URL('../../pkg/hostpace_bg.wasm', import.meta.url));
  const gzipped = gzipSync(wasm, { level: 9 }).length;
  console.log(`hostpace_bg.wasm: ${wasm.length} bytes, ${gzipped} bytes gzipped (budget ${BUDGET})`);
  assert.ok(gzipped <= BUDGET, `${gzipped} bytes gzipped is over the ${BUDGET}-byte budget`);
});
