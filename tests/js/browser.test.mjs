// The package in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) loads a
// page from 127.0.0.1 that imports `hostpace` through an import map pointing at pkg/browser.js (the `browser`
// export condition: fetched next to the module, initialised by top-level await, no init step, its Public Suffix
// List loaded beside it), then paces requests to the same origin with `limiter.fetch`. The origin's own log is the
// judge.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { TOL } from './helpers.mjs';

const root = new URL('../../', import.meta.url).pathname;
const TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const arrivals = [];
/** Requests for robots.txt and for the paths it disallows, in order. */
const requests = [];
let server;
let base;

const PAGE = `<!doctype html><meta charset="utf-8"><title>hostpace in a browser</title>
<script type="importmap">{ "imports": { "hostpace": "/pkg/browser.js" } }</script>
<script type="module">
  import { Limiter, TokenBucket, nowMs } from 'hostpace';
  try {
    const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1, minIntervalSec: 0.3 });
    const first = limiter.acquire(location.origin + '/x', 0);
    const second = limiter.acquire(location.origin + '/x', 0);
    // one unpaced request first, so that opening a connection is not part of the first paced arrival's latency,
    // then a moment for the page's start-up work (module and wasm compilation) to finish: on a busy 2-core
    // machine a request sent during it reached the origin up to 90 ms late, so the next one arrived "early"
    await (await fetch('/warm')).text();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // the page's own record of when each paced request left (limiter.fetch calls globalThis.fetch)
    const departures = [];
    const pageFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      if (String(input).includes('/paced/')) departures.push(performance.timeOrigin + performance.now());
      return pageFetch(input, init);
    };
    // robots.txt is fetched first (through the same pacing), and what it disallows is refused unsent
    const responses = await Promise.all([1, 2, 3].map((i) => limiter.fetch('/paced/' + i)));
    let refused = '';
    try { await limiter.fetch('/private/x'); } catch (e) { refused = e.name + ' ' + e.rule; }
    let configError = '';
    try { new Limiter({ ratePerSec: -1 }); } catch (e) { configError = e.message; }
    // hosts grouped by site, by the Public Suffix List next to the module (psl.js, imported by browser.js)
    const bySite = new Limiter({ ratePerSec: 1, burstCapacity: 1, groupBy: 'site' });
    const site = ['www', 'img'].map((h) => bySite.acquire('https://' + h + '.example.co.uk/', 0).waitMs);
    window.result = {
      site,
      first: first.waitMs, second: second.waitMs, layer: second.layer,
      statuses: responses.map((r) => r.status), bucket: new TokenBucket(1, 2).acquire(0),
      clock: nowMs(), configError, departures, refused,
    };
  } catch (e) {
    window.result = { error: String(e && e.stack || e) };
  }
</script>`;

before(async () => {
  server = http.createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path.startsWith('/paced/')) {
      arrivals.push(performance.timeOrigin + performance.now());
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (path === '/robots.txt') {
      requests.push(path);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
      return;
    }
    if (path.startsWith('/private/')) requests.push(path);
    if (path === '/favicon.ico' || path === '/warm') {
      res.writeHead(204).end();
      return;
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(join(root, 'pkg'))) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

test('the browser entry imports with no init step, obeys robots.txt and paces fetches seen by the origin', async () => {
  // playwright-core starts Chromium with a fresh temporary profile of its own (a --user-data-dir is refused)
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(base + '/');
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20_000 });
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined, result.error);
    assert.deepEqual(errors, []);
    assert.equal(result.first, 0);
    assert.equal(result.second, 1000);
    assert.equal(result.layer, 'burst');
    assert.deepEqual(result.statuses, [200, 200, 200]);
    assert.equal(result.bucket, 0);
    assert.ok(Math.abs(result.clock - Date.now()) < 60_000, 'the clock adapter reads epoch milliseconds');
    assert.match(result.configError, /ratePerSec/);
    assert.deepEqual(result.site, [0, 1000], 'two hosts of one site wait for each other');
    assert.equal(result.refused, 'RobotsDisallowed Disallow: /private/ (line 2)');
    assert.deepEqual(requests, ['/robots.txt'], 'robots.txt once, the disallowed path never');
    assert.equal(result.departures.length, 3);
    assert.equal(arrivals.length, 3);
    for (let i = 1; i < arrivals.length; i++) {
      // the page's clock is exact about departures; the origin's log also carries the browser's and this
      // process's scheduling (TOL, see helpers.mjs)
      const left = result.departures[i] - result.departures[i - 1];
      const gap = arrivals[i] - arrivals[i - 1];
      assert.ok(left >= 1000 - 1, `departures ${left.toFixed(1)} ms apart under 1 request/s`);
      assert.ok(gap >= 1000 - TOL, `arrivals ${gap.toFixed(1)} ms apart under 1 request/s (departures ${left.toFixed(1)} ms)`);
    }
  } finally {
    await browser.close();
  }
});
