// Every code block of README.md, run as written, so that the README cannot drift. The blocks are read from the
// file itself; each is matched to the check below that runs it, and a block no check knows fails the suite.
//
//   node --test tests/readme/        (after `npm run build:pkg` and `scripts/build-worker.sh`; CI runs it in
//                                     scripts/test.sh)
//
// What "run" means for each:
// - shell blocks run in bash from the repository's root, as a reader pastes them: the package install (into
//   /tmp/my-crawler), `scripts/dev.sh --allow-local` (the real gateway on 127.0.0.1:8787), the first request
//   through it (a python3 http.server on 127.0.0.1:8000), the playground's static server (127.0.0.1:8000);
// - JavaScript blocks are saved where the README says and run with node, against origins on 127.0.0.1 that keep
//   their own access logs (the judge of politeness), or against the gateway and its python3 site;
// - the Rust block is a doctest of the crate (`src/lib.rs` includes README.md under `cfg(doctest)`);
// - the quick start's two commands: `scripts/dev.sh` is the script the gateway block runs, and `scripts/test.sh`
//   is the command that runs this file;
// - the deploy block needs a Cloudflare account and the network, which a test machine has neither of: each
//   `wrangler` command in it is checked by wrangler itself (`--help`), and the deploy line runs with `--dry-run`.
// Processes started here are stopped by their process group, never by name.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Origin, TOL, assertSpacing, sleep } from '../js/helpers.mjs';
import { startRedis } from '../support/redis.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');
const APP = '/tmp/my-crawler';

/** The fenced code blocks of README.md: `{ lang, code, line }`. */
function codeBlocks(text) {
  const blocks = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m; (m = fence.exec(text)) !== null; ) {
    blocks.push({ lang: m[1], code: m[2], line: text.slice(0, m.index).split('\n').length });
  }
  return blocks;
}

/** Each block's check, by the block's first line (the README's own words). */
const CHECKS = [
  ['sh', 'scripts/dev.sh     # run:', 'quick start'],
  ['sh', 'npm run build:pkg                     # prints', 'install'],
  ['js', "import { Limiter } from 'hostpace';", 'first program'],
  ['sh', 'cd /tmp/my-crawler && npm install @crawlee/http@3', 'crawlee install'],
  ['js', "import { HttpCrawler } from '@crawlee/http';", 'crawlee'],
  ['sh', 'scripts/dev.sh --allow-local', 'gateway'],
  ['sh', 'mkdir -p /tmp/site', 'first request'],
  ['js', "import { GatewayLimiter } from 'hostpace';", 'fleet'],
  ['sh', '. scripts/node-env.sh', 'deploy'],
  ['sh', 'cd /tmp/my-crawler && npm install ioredis@5', 'redis install'],
  ['js', "import { SharedLimiter } from 'hostpace';", 'shared'],
  ['sh', 'npm run build:pkg                               # builds pkg/', 'playground'],
  ['rust', 'use hostpace::', 'rust'],
];
const blocks = codeBlocks(readme);
const block = (name) => {
  const [lang, first] = CHECKS.find((c) => c[2] === name);
  const found = blocks.filter((b) => b.lang === lang && b.code.startsWith(first));
  assert.equal(found.length, 1, `README.md has ${found.length} ${lang} blocks starting with ${first}`);
  return found[0].code;
};

/** PATH as a user's shell has it: without the project's own Node (target/runtimes/), which the test command adds. */
const machinePath = () => process.env.PATH.split(':').filter((dir) => !dir.includes('/target/runtimes/')).join(':');

/** Run `command` (a shell block) in bash from the root; resolves `{ code, stdout, stderr }`, never rejects. */
function bash(command, { timeout = 300_000, env = {} } = {}) {
  return new Promise((resolve) => {
    execFile('bash', ['-euo', 'pipefail', '-c', command], { cwd: root, timeout, env: { ...process.env, ...env }, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }));
  });
}

/** Start `command` in bash, in its own process group (stopped with `stop()`); its output is collected. */
function background(command) {
  const child = spawn('bash', ['-c', command], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  child.stdout.on('data', (c) => output.push(String(c)));
  child.stderr.on('data', (c) => output.push(String(c)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    output,
    exited,
    async stop() {
      for (const signal of ['SIGTERM', 'SIGKILL']) {
        try {
          process.kill(-child.pid, signal);
        } catch (_) {
          return; // the group is gone
        }
        if (await Promise.race([exited.then(() => true), sleep(5000).then(() => false)])) return;
      }
    },
  };
}

/** Poll `url` until it answers 200 (within `ms`): its body. */
async function until200(url, ms, what) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await res.text();
      if (res.status === 200) return body;
    } catch (_) {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${what} did not answer 200 at ${url} within ${ms} ms`);
}

/** Run a JS block saved as `file` in the app folder with node: `{ code, stdout, stderr }`. */
function node(file, args, env = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { cwd: APP, timeout: 120_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }));
  });
}

test('every code block of README.md has a check here', () => {
  const unknown = blocks.filter((b) => !CHECKS.some(([lang, first]) => b.lang === lang && b.code.startsWith(first)));
  assert.deepEqual(unknown.map((b) => `line ${b.line}: ${b.code.split('\n')[0]}`), []);
  assert.equal(blocks.length, CHECKS.length, 'one block per check');
});

test('quick start: the two commands exist; dev.sh is run below, test.sh runs this file', async () => {
  const lines = block('quick start').split('\n').filter((l) => /^\S/.test(l)).map((l) => l.split('#')[0].trim());
  assert.deepEqual(lines, ['scripts/dev.sh', 'scripts/test.sh']);
  for (const script of lines) accessSync(`${root}${script}`, constants.X_OK);
  assert.match(readFileSync(`${root}scripts/test.sh`, 'utf8'), /node --test .*tests\/readme\//);
  const help = await bash('scripts/dev.sh --help');
  assert.equal(help.code, 0, help.stderr);
});

test('the Rust block is a doctest of the crate', () => {
  assert.match(readFileSync(`${root}src/lib.rs`, 'utf8'), /#\[cfg\(doctest\)\]\n#\[doc = include_str!\("..\/README.md"\)\]/);
});

describe('I write a JS crawler', () => {
  test('install: the tarball goes into a fresh project', async () => {
    const run = await bash(block('install'));
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const installed = JSON.parse(readFileSync(`${APP}/node_modules/hostpace/package.json`, 'utf8'));
    assert.equal(installed.name, 'hostpace');
  });

  test('the first program crawls politely, obeys robots.txt and says what it did', async () => {
    writeFileSync(`${APP}/crawl.mjs`, block('first program'));
    const origin = await Origin.start({
      '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private.html\n' },
      '/': { status: 200, body: '<a href="/a.html">a</a> <a href="/private.html">p</a> <a href="/b.html">b</a>' },
      '/a.html': { status: 200, body: '<a href="/b.html">b</a> <a href="/">home</a>' },
      '/b.html': [{ status: 429, headers: { 'Retry-After': '2' } }, { status: 200, body: 'b' }],
    });
    try {
      const run = await node('crawl.mjs', [origin.url('/')]);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      const paths = origin.log.map((e) => e.path);
      assert.deepEqual(paths, ['/robots.txt', '/', '/a.html', '/b.html', '/b.html'], 'what the origin received');
      assert.ok(origin.log.every((e) => e.headers['user-agent'] === 'my-crawler/1.0 (+https://example.org/bot)'));
      assertSpacing(assert, origin.arrivals(), 1000, TOL, 'the site');
      const [b429, b200] = origin.arrivals('/b.html');
      assert.ok(b200 - b429 >= 2000 - TOL, `the retry came ${b200 - b429} ms after the 429 (Retry-After: 2)`);
      assert.match(run.stdout, /^robots .*robots\.txt waited \d+ ms \(none\) → 200$/m);
      assert.match(run.stdout, /b\.html waited \d+ ms \(cooldown\) → 200/);
      assert.match(run.stdout, /private\.html: RobotsDisallowed: /);
      assert.match(run.stdout, /^3 of 4 pages fetched$/m);
    } finally {
      await origin.close();
    }
  });

  test('the first program fails loudly when nothing can be fetched', async () => {
    const closed = await Origin.start();
    const url = closed.url('/');
    await closed.close(); // nothing listens there any more
    const run = await node('crawl.mjs', [url]);
    assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^0 of 1 pages fetched$/m);
  });
});

describe('I write a JS crawler: with Crawlee', () => {
  test('Crawlee installs beside the package, and the Crawlee program crawls two hosts, each paced', async () => {
    const install = await bash(block('crawlee install'));
    assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
    writeFileSync(`${APP}/crawlee.mjs`, block('crawlee'));
    const a = await Origin.start({
      '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' },
      '/busy': [{ status: 429, headers: { 'Retry-After': '2' } }, { status: 200, body: 'ok' }],
    });
    const b = await Origin.start({ '/robots.txt': { status: 404 } });
    try {
      const urls = [...['/1', '/2', '/busy', '/private'].map((p) => a.url(p)), ...['/1', '/2', '/3'].map((p) => b.url(p))];
      const run = await node('crawlee.mjs', urls);
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      for (const url of [a.url('/1'), a.url('/2'), a.url('/busy'), b.url('/1'), b.url('/2'), b.url('/3')]) {
        assert.match(run.stdout, new RegExp(`^${url.replace(/[.]/g, '\\.')} 200$`, 'm'), `${url} handled`);
      }
      assert.match(run.stdout, new RegExp(`^${a.url('/private').replace(/[.]/g, '\\.')} RobotsDisallowed$`, 'm'));
      assert.equal(a.arrivals('/private').length, 0, 'the disallowed URL was never sent');
      for (const o of [a, b]) {
        assert.equal(o.log[0].path, '/robots.txt', 'robots.txt first');
        // 3 × TOL: the process's first fetch (robots.txt, through the platform's fetch) leaves tens of milliseconds
        // after its confirmed departure while the HTTP client starts; the next one is on time
        assertSpacing(assert, o.arrivals(), 500, 3 * TOL, o.host);
      }
      const [busy429, busy200] = a.arrivals('/busy');
      assert.ok(busy200 - busy429 >= 2000 - TOL, `the retry came ${busy200 - busy429} ms after the 429`);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('I run a crawler fleet (the gateway)', () => {
  let gateway;
  let site;
  before(async () => {
    gateway = background(block('gateway'));
    await until200('http://127.0.0.1:8787/healthz', 300_000, 'scripts/dev.sh --allow-local').catch(async (e) => {
      await gateway.stop();
      throw new Error(`${e.message}\n${gateway.output.join('').slice(-3000)}`);
    });
  });
  after(async () => {
    await site?.stop();
    await gateway?.stop();
  });

  test('the first request goes through the gateway to the local site', async () => {
    site = background(block('first request'));
    const code = await site.exited;
    const answer = site.output.join('');
    assert.equal(code, 0, answer);
    assert.match(answer, /^HTTP\/1\.1 200 /m);
    assert.match(answer, /^hostpace-wait-ms: \d/im);
    assert.match(answer, /^hostpace-layer: /im);
    assert.match(answer, /<a href="\/about.html">about<\/a>/);
  });

  test('the fleet program fetches through the gateway', async () => {
    writeFileSync(`${APP}/fleet.mjs`, block('fleet'));
    const token = /^GATEWAY_TOKEN=(.*)$/m.exec(readFileSync(`${root}.dev.vars`, 'utf8'))[1];
    const run = await node('fleet.mjs', ['http://127.0.0.1:8000/'], {
      HOSTPACE_GATEWAY: 'http://127.0.0.1:8787',
      HOSTPACE_TOKEN: token,
    });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^http:\/\/127\.0\.0\.1:8000\/: waited \d+ ms \(\w+\)$/m);
    assert.match(run.stdout, /^http:\/\/127\.0\.0\.1:8000\/ 200$/m);
  });
});

describe('My fleet runs on its own machines (Redis or Valkey)', () => {
  test('ioredis installs, and two processes of the shared program pace one host together', async () => {
    const install = await bash(block('redis install'));
    assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
    writeFileSync(`${APP}/shared.mjs`, block('shared'));
    const redis = await startRedis();
    const origin = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' } });
    try {
      const env = { REDIS_URL: redis.url, FLEET_SIZE: '2' };
      const runs = await Promise.all([
        node('shared.mjs', ['/1', '/2', '/private'].map((p) => origin.url(p)), env),
        node('shared.mjs', ['/3', '/4'].map((p) => origin.url(p)), env),
      ]);
      for (const run of runs) assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
      const out = runs.map((r) => r.stdout).join('');
      for (const p of ['/1', '/2', '/3', '/4']) assert.match(out, new RegExp(`^${origin.url(p).replace(/[.]/g, '\\.')} 200$`, 'm'));
      assert.match(out, new RegExp(`^${origin.url('/private').replace(/[.]/g, '\\.')} RobotsDisallowed$`, 'm'));
      assert.equal(origin.arrivals('/robots.txt').length, 1, 'one robots.txt for the two processes');
      assert.equal(origin.arrivals('/private').length, 0, 'the disallowed URL was never sent');
      // 2 per second together: 500 ms between any two arrivals, whichever process sent them (3 × TOL: each
      // process's first fetch leaves a little late while its HTTP client starts)
      assertSpacing(assert, origin.arrivals(), 500, 3 * TOL, origin.host);
    } finally {
      await origin.close();
      await redis.stop();
    }
  });
});

test('deploy: each wrangler command is one wrangler knows; the deploy runs with --dry-run', async () => {
  const lines = block('deploy').split('\n').filter((l) => l.trim()).map((l) => l.replace(/\s+#.*$/, ''));
  assert.equal(lines.length, 4);
  // the first line picks the Node that wrangler runs on: 22 or later, even where the machine's is older
  const [env, ...commands] = lines;
  assert.equal(env, '. scripts/node-env.sh');
  const node = await bash(`PATH=${JSON.stringify(machinePath())}; ${env}; node --version`);
  assert.ok(Number(/^v(\d+)\./.exec(node.stdout)?.[1]) >= 22, `${env} gives Node ${node.stdout}${node.stderr}`);
  for (const line of commands) {
    const wrangler = /npx wrangler (\w+(?: put)?)(.*)$/.exec(line);
    assert.ok(wrangler, `not a wrangler command: ${line}`);
    const [, command, rest] = wrangler;
    const run =
      command === 'deploy'
        ? await bash(`${env}; npx wrangler deploy${rest} --dry-run --outdir "$(mktemp -d)"`)
        : await bash(`${env}; npx wrangler ${command} --help`);
    assert.equal(run.code, 0, `${line}\n${run.stdout}\n${run.stderr}`);
    if (command === 'deploy') assert.match(`${run.stdout}${run.stderr}`, /--dry-run: exiting now/);
  }
  const secret = await bash(commands[2].split('|')[0]);
  assert.match(secret.stdout, /^[0-9a-f]{48}\n$/, 'the secret command makes a 48-hex-digit token');
});

test('the playground block serves the page on 127.0.0.1:8000', async () => {
  const server = background(block('playground'));
  try {
    const page = await until200('http://127.0.0.1:8000/', 300_000, 'the playground block');
    assert.match(page, /<title>hostpace playground/);
    await until200('http://127.0.0.1:8000/pkg/hostpace_bg.wasm', 5000, 'the wasm module');
  } finally {
    await server.stop();
  }
});

before(() => {
  mkdirSync(APP, { recursive: true });
  assert.ok(existsSync(`${root}worker/build/index.js`), 'build the Worker first: scripts/build-worker.sh');
});
