// The npm package on every runtime it supports: Node 20, 22, 24 and 26, Deno 2 and Bun 1 (installed into
// target/runtimes/ by scripts/setup-runtimes.sh). The packed tarball is installed offline into a project folder,
// target/runtimes/app, next to a copy of smoke.mjs; each runtime runs that copy against two origins on 127.0.0.1
// started here, and the origins' own access logs (what the target sees) must show a polite, correct run.
//
//   node --test tests/runtimes/
//
// Each runtime resolves `import 'hostpace'` through the package's `exports` with its own conditions; the file it
// loaded is printed with each result (Deno and Bun, like Node, match the `node` condition: node.js).

import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { assertSpacing, Origin, TOL } from '../js/helpers.mjs';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const runtimes = `${root}target/runtimes/`;
const app = `${runtimes}app/`;

/** Bound on one runtime's run of the smoke program (ms); it bounds itself at 45 s. */
const RUN_MS = 60_000;

/** The pacing smoke.mjs asks for on the origins: 2 requests/s, burst 1. */
const INTERVAL_MS = 500;

/**
 * The runtimes, each with the arguments it runs a module with. Deno gets only what the program needs: reading the
 * project folder (the package's wasm file), the environment variable of the timing tolerance, and the network of
 * 127.0.0.1; no lock file, no prompt. Bun is told never to install missing packages itself.
 */
const RUNTIMES = [
  { dir: 'node20', label: 'Node', major: 20, exe: 'node', args: [] },
  { dir: 'node22', label: 'Node', major: 22, exe: 'node', args: [] },
  { dir: 'node24', label: 'Node', major: 24, exe: 'node', args: [] },
  { dir: 'node26', label: 'Node', major: 26, exe: 'node', args: [] },
  {
    dir: 'deno2',
    label: 'Deno',
    major: 2,
    exe: 'deno',
    args: ['run', '--no-prompt', '--no-lock', `--allow-read=${app}`, '--allow-env=HOSTPACE_TEST_TOLERANCE_MS',
      '--allow-net=127.0.0.1'],
  },
  { dir: 'bun1', label: 'Bun', major: 1, exe: 'bun', args: ['--no-install'] },
];

/** The children's environment: no colours, no update checks, Deno's cache inside its own folder. */
const env = { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1', DENO_DIR: `${runtimes}deno2/cache` };

/** Why a runtime binary did not say its version, when it did not. */
const versionErrors = new Map();

/** A runtime binary's version (x.y.z), or undefined when it is missing or does not run (why: `versionErrors`). */
function versionOf(binary) {
  if (!existsSync(binary)) return undefined;
  try {
    // a first start reads the whole binary (about 120 MB) from disk: seconds on a busy machine
    const out = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 60_000, env });
    return /(\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch (error) {
    versionErrors.set(binary, error.message);
    return undefined;
  }
}

/** Run a child to its end (or its timeout, when it is killed): its exit code, signal and output, never a throw. */
function runChild(binary, args, options) {
  return new Promise((resolve) => {
    execFile(binary, args, { ...options, encoding: 'utf8', killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, signal: error?.signal, killed: error?.killed, stdout, stderr });
    });
  });
}

/** An origin's log as smoke.mjs reads it (`GET /__log`): arrivals other than /__log, as `{ t, path, status }`. */
function serveLog(origin) {
  const entries = () => origin.log.filter((e) => e.path !== '/__log');
  origin.routes['/__log'] = () => ({
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(entries().map(({ t, path, status }) => ({ t, path, status }))),
  });
  return entries;
}

before(async () => {
  const pkg = `${root}pkg/package.json`;
  assert.ok(existsSync(pkg), 'pkg/ is missing: build the package first (npm run build:pkg)');
  const { version } = JSON.parse(readFileSync(pkg, 'utf8'));
  const tarball = `${root}target/npm/hostpace-${version}.tgz`;
  assert.ok(existsSync(tarball), `${tarball} is missing: build the package first (npm run build:pkg)`);
  // a new project folder each run, so that it holds the tarball as built now
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  writeFileSync(`${app}package.json`, JSON.stringify({ name: 'hostpace-smoke', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', tarball],
    { cwd: app, timeout: 60_000 });
  copyFileSync(fileURLToPath(new URL('./smoke.mjs', import.meta.url)), `${app}smoke.mjs`);
});

for (const { dir, label, major, exe, args } of RUNTIMES) {
  const binary = `${runtimes}${dir}/bin/${exe}`;
  const version = versionOf(binary);
  const name = `${label} ${version ?? `${major} (not installed)`}: import, decision, polite fetch with 429 + ` +
    'Retry-After, frontier';

  test(name, { timeout: RUN_MS + 30_000 }, async (t) => {
    const why = versionErrors.get(binary) ?? 'no such file';
    assert.ok(version, `${binary} is missing or does not run (${why}): install the runtimes with scripts/setup-runtimes.sh`);
    assert.equal(Number(version.split('.')[0]), major, `${binary} is ${label} ${version}, expected ${major}.x`);

    // Origin A: robots.txt absent (404: allow all), /retry answers 429 + Retry-After: 1 once, then 200.
    const a = await Origin.start({
      '/robots.txt': { status: 404 },
      '/retry': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: 'ok' }],
    });
    // Origin B: its robots.txt is given to the limiter by the program, so it should never be asked for.
    const b = await Origin.start({ '/robots.txt': { status: 404 } });
    const logA = serveLog(a);
    const logB = serveLog(b);
    try {
      const started = performance.now();
      const child = await runChild(binary, [...args, 'smoke.mjs', a.url(''), b.url('')], {
        cwd: app,
        env,
        timeout: RUN_MS,
      });
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const lines = child.stdout.trim().split('\n');
      let result;
      try {
        result = JSON.parse(lines[lines.length - 1]);
      } catch (_) {
        result = undefined;
      }
      const entry = result?.entry?.startsWith(pathToFileURL(app).href)
        ? result.entry.slice(pathToFileURL(app).href.length)
        : result?.entry;
      t.diagnostic(`${label} ${version} loaded ${entry ?? '(unknown)'}; run took ${seconds} s`);
      const said = `exit ${child.code}${child.killed ? ` (killed after ${RUN_MS} ms)` : ''}\n` +
        `stdout: ${child.stdout.trim()}\nstderr: ${child.stderr.trim()}`;
      assert.equal(child.code, 0, `the smoke program failed under ${label} ${version}: ${said}`);
      assert.equal(result?.ok, true, `no result line: ${said}`);
      assert.ok(/^node_modules\/hostpace\/[a-z]+\.js$/.test(entry),
        `${label} resolved 'hostpace' to ${result.entry}, not to an entry of the installed package`);
      t.diagnostic(`result: ${JSON.stringify({ ...result, entry: undefined })}`);

      // A: robots.txt first, then the 429, the retry after Retry-After, then the frontier's three URLs in order.
      const seenA = logA().map((e) => `${e.path} ${e.status}`);
      assert.deepEqual(seenA, ['/robots.txt 404', '/retry 429', '/retry 200', '/f1 200', '/f2 200', '/f3 200']);
      const [, tooMany, retry] = logA();
      const retryGap = retry.t - tooMany.t;
      assert.ok(retryGap >= 1000 - TOL, `retry ${retryGap.toFixed(1)} ms after the 429 (Retry-After: 1)`);
      assert.ok(retryGap < 1000 + 1500, `retry ${retryGap.toFixed(1)} ms after the 429: far later than Retry-After`);
      assertSpacing(assert, logA().map((e) => e.t), INTERVAL_MS, TOL, `origin A under ${label} ${version}`);
      // the polite requests named the crawler (the frontier's were the program's own plain fetches)
      for (const e of logA().slice(0, 3)) {
        assert.match(e.headers['user-agent'] ?? '', /^hostpace\//, `${e.path}: User-Agent ${e.headers['user-agent']}`);
      }

      // B: the frontier's order (the higher priority first), paced; robots.txt never fetched, /private never sent.
      assert.deepEqual(logB().map((e) => `${e.path} ${e.status}`), ['/g3 200', '/g1 200', '/g2 200']);
      assertSpacing(assert, logB().map((e) => e.t), INTERVAL_MS, TOL, `origin B under ${label} ${version}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
}
