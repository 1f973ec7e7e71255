// `wrangler deploy --dry-run` on the project's wrangler.toml, as the README's deploy section runs it (without the
// upload): wrangler accepts the configuration, bundles the Worker, and the bundle stays within its budget, 512 KB
// (512,000 bytes) gzipped (Cloudflare's limit on the free plan is 3 MB; the budget is the project's own). The bundle is measured twice:
// wrangler's own "Total Upload … / gzip: …" line, and the files it wrote, gzipped here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { WRANGLER_ENV, root, tempDir } from './gateway.mjs';

/** The deploy bundle's budget: 512 KB gzipped, in KiB as wrangler reports it. */
const LIMIT_KIB = 512_000 / 1024;

test('wrangler deploy --dry-run bundles the gateway within 512 KB gzipped', async () => {
  const outdir = tempDir('hostpace-deploy-');
  const { stdout, stderr } = await promisify(execFile)(
    `${root}node_modules/.bin/wrangler`,
    ['deploy', '--dry-run', '--outdir', outdir],
    {
      cwd: root,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
      env: WRANGLER_ENV,
    },
  );
  const output = `${stdout}\n${stderr}`;
  assert.match(output, /--dry-run: exiting now/, output.slice(-2000));
  const total = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(output);
  assert.ok(total, `no "Total Upload" line in wrangler's output:\n${output.slice(-2000)}`);
  const wranglerGzipKiB = Number(total[2]);
  assert.ok(wranglerGzipKiB <= LIMIT_KIB, `wrangler: ${wranglerGzipKiB} KiB gzipped`);

  // the files uploaded (the module and the wasm; not the source map, not wrangler's README)
  const files = readdirSync(outdir).filter((f) => /\.(js|mjs|wasm)$/.test(f));
  assert.ok(files.some((f) => f.endsWith('.wasm')) && files.some((f) => f.endsWith('.js')), files.join(', '));
  const gzipBytes = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(outdir, f)), { level: 9 }).length, 0);
  assert.ok(gzipBytes <= LIMIT_KIB * 1024, `${gzipBytes} bytes gzipped (${files.join(', ')})`);
  // the two measurements agree (wrangler's gzip level differs a little)
  assert.ok(Math.abs(gzipBytes / 1024 - wranglerGzipKiB) < 0.1 * wranglerGzipKiB, `${gzipBytes} B vs ${total[0]}`);
  console.log(`deploy bundle: ${total[0]}; ${files.length} files, ${gzipBytes} bytes gzipped at level 9`);
});
