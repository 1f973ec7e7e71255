// The installable package: the tarball `npm run build:pkg` packs (target/npm/hostpace-<version>.tgz) holds what
// a user needs, installs with npm into an empty project without the network, and imports there by its name (its
// Public Suffix List, psl.js, included: the package imports nothing by a bare name).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}pkg/package.json`, 'utf8'));
const tarball = `${root}target/npm/hostpace-${version}.tgz`;

test('the tarball holds the module, its types, the README, the changelog and both licenses', async () => {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  const files = new Set(stdout.split('\n').filter(Boolean));
  for (const f of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'node.js',
    'browser.js', 'workerd.js', 'index.d.ts', 'hostpace_bg.wasm', 'psl.js']) {
    assert.ok(files.has(`package/${f}`), `${f} is in ${tarball}`);
  }
  const { stdout: meta } = await run('tar', ['-xzOf', tarball, 'package/package.json']);
  const pkg = JSON.parse(meta);
  assert.equal(pkg.name, 'hostpace');
  assert.equal(pkg.license, 'MIT OR Apache-2.0');
  assert.ok(pkg.engines?.node && pkg.keywords?.length > 0, 'engines and keywords');
});

test('npm installs the tarball into an empty project offline, and `hostpace` imports and decides there', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hostpace-install-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'a-crawler', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
      cwd: dir,
      timeout: 60_000,
    });
    const program = [
      "import { Limiter } from 'hostpace';",
      'const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1 });',
      "const first = limiter.acquire('https://example.com/a', 0);",
      "const second = limiter.acquire('https://example.com/b', 0);",
      "const bySite = new Limiter({ ratePerSec: 1, burstCapacity: 1, groupBy: 'site' });",
      "const site = ['www', 'img'].map((h) => bySite.acquire(`https://${h}.example.com/`, 0).waitMs);",
      'console.log(JSON.stringify([first.waitMs, second.waitMs, ...site]));',
    ].join('\n');
    writeFileSync(join(dir, 'main.mjs'), program);
    const { stdout } = await run(process.execPath, ['main.mjs'], { cwd: dir, timeout: 30_000 });
    assert.deepEqual(JSON.parse(stdout), [0, 1000, 0, 1000]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Bundlers (esbuild for Workers, webpack, Rollup) drop an import of a file that package.json's `sideEffects` does
// not name when nothing is used from it. Only the entry points are named (they initialise the module); every other
// file only defines, and is kept because what it defines is used. Each entry point is bundled with esbuild; the
// Node and workerd bundles are run (workerd's with the module's bytes inlined, which its initSync takes as well), and
// the browser bundle must hold every class's file.
test('a bundled entry point keeps its classes, and runs', async () => {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'hostpace-bundle-'));
  try {
    copyFileSync(`${root}pkg/hostpace_bg.wasm`, join(dir, 'hostpace_bg.wasm'));
    for (const [entry, platform, conditions, runs] of [
      ['node.js', 'node', ['node'], true],
      ['browser.js', 'browser', ['browser'], false],
      ['workerd.js', 'neutral', ['workerd'], true],
    ]) {
      const program = [
        `import { Limiter, Frontier } from './pkg/${entry}';`,
        'const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1 });',
        'const said = (call) => { try { call(); return "nothing"; } catch (e) { return `${e.name}: ${e.message}`; } };',
        "const waits = ['a', 'b'].map((p) => limiter.acquire(`https://example.com/${p}`, 0).waitMs);",
        'const typeError = said(() => limiter.acquire(42));',
        "const error = said(() => limiter.acquire('not a url', 0));",
        "const pushed = new Frontier(limiter).push('https://example.org/');",
        "const bySite = new Limiter({ ratePerSec: 1, burstCapacity: 1, groupBy: 'site' });",
        "const site = ['www', 'img'].map((h) => bySite.acquire(`https://${h}.example.com/`, 0).waitMs);",
        'console.log(JSON.stringify({ waits, typeError, error, pushed, site }));',
      ].join('\n');
      const outfile = join(dir, `${entry.replace('.js', '')}.bundle.mjs`);
      const result = await build({
        stdin: { contents: program, resolveDir: root },
        absWorkingDir: root,
        bundle: true,
        outfile,
        metafile: true,
        format: 'esm',
        platform,
        conditions,
        target: 'es2022',
        loader: { '.wasm': 'binary' },
        logLevel: 'silent',
      });
      const [output] = Object.values(result.metafile.outputs);
      for (const file of ['limiter.js', 'frontier.js', 'answer.js', 'lifecycle.js', 'turns.js', 'psl.js']) {
        assert.ok(output.inputs[`pkg/${file}`]?.bytesInOutput > 0, `${entry} bundled without pkg/${file}`);
      }
      const ignored = result.warnings.filter((w) => w.id === 'ignored-bare-import').map((w) => w.text);
      assert.deepEqual(ignored, [], `${entry}: imports esbuild ignored`);
      if (!runs) continue;
      const { stdout } = await run(process.execPath, [outfile], { cwd: dir, timeout: 30_000 });
      const said = JSON.parse(stdout);
      assert.deepEqual(said.waits, [0, 1000], `${entry} bundled decides`);
      assert.match(said.typeError, /^TypeError: invalid url: expected a URL string or a URL object, got a number$/);
      assert.match(said.error, /^Error: invalid URL "not a url"/, `${entry} bundled throws the core's errors`);
      assert.equal(said.pushed, true);
      assert.deepEqual(said.site, [0, 1000], `${entry} bundled groups hosts by site`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
