// The README's short crawler (tests/js/crawler.mjs) against two local hosts, checked from the origins' logs.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Limiter } from '../../pkg/node.js';
import { crawl } from './crawler.mjs';
import { Origin, TOL, assertSpacing, clockMs } from './helpers.mjs';

const INTERVAL = 250;

let a, b;
const html = (links) => links.map((href) => `<a href="${href}">${href}</a>`).join('\n');
const page = (links) => () => ({ status: 200, body: html(links()) });

before(async () => {
  // host A: / → a1, a2 (and B's home); a1 → a3; a2 → a1 (a cycle); a3 → #fragment and mailto (not followed);
  // its robots.txt disallows a3
  a = await Origin.start({
    '/robots.txt': { headers: { 'Content-Type': 'text/plain' }, body: 'User-agent: *\nDisallow: /a3\n' },
    '/': page(() => ['/a1', '/a2', b.url('/')]),
    '/a1': page(() => ['/a3', '/']),
    '/a2': page(() => ['/a1', 'a3']),
    '/a3': page(() => ['#top', 'mailto:webmaster@127.0.0.1', a.url('/a1')]),
  });
  // host B: / → b1, b2; b1 answers 429 + Retry-After: 1 once, then links back to A; no robots.txt (404)
  b = await Origin.start({
    '/robots.txt': { status: 404 },
    '/': page(() => ['/b1', '/b2']),
    '/b1': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: html([a.url('/a2'), '/b2']) }],
    '/b2': page(() => ['/b1']),
  });
  await Promise.all([a.warm(2), b.warm(2)]); // measure the crawl, not undici's cold start
});

after(() => Promise.all([a.close(), b.close()]));

test('the README crawler fetches every page robots.txt allows once, paced per host, in parallel, 429 honoured', async () => {
  const limiter = new Limiter({ ratePerSec: 10, burstCapacity: 1, minIntervalSec: INTERVAL / 1000, maxBackoffSec: 5 });
  const t0 = clockMs();
  const pages = await crawl([a.url('/')], limiter);
  const took = clockMs() - t0;

  const expected = [...['/', '/a1', '/a2', '/a3'].map((p) => a.url(p)), ...['/', '/b1', '/b2'].map((p) => b.url(p))];
  assert.deepEqual([...pages.keys()].sort(), expected.sort());
  for (const [url, status] of pages) {
    // a3 is found after A's robots.txt arrived: the frontier refuses it
    if (url === a.url('/a3')) assert.equal(status, 'disallowed by robots.txt', url);
    else assert.equal(status, 200, url);
  }

  // robots.txt first and once per host; every page it allows reached the origin once, a3 never; b1 twice (429,
  // then 200 after the cooldown)
  const count = (o) => Object.fromEntries(o.log.map((e) => [e.path, o.log.filter((x) => x.path === e.path).length]));
  assert.deepEqual(count(a), { '/robots.txt': 1, '/': 1, '/a1': 1, '/a2': 1 });
  assert.deepEqual(count(b), { '/robots.txt': 1, '/': 1, '/b1': 2, '/b2': 1 });
  for (const o of [a, b]) assert.equal(o.log[0].path, '/robots.txt');

  // per host: never closer than the interval
  assertSpacing(assert, a.arrivals(), INTERVAL, TOL, 'host A');
  assertSpacing(assert, b.arrivals(), INTERVAL, TOL, 'host B');
  // after B's 429 (Retry-After: 1) nothing reached B for 1 s
  const t429 = b.log.find((e) => e.status === 429).t;
  for (const e of b.log.filter((x) => x.t > t429)) {
    assert.ok(e.t - t429 >= 1000 - TOL, `${e.path} reached B ${(e.t - t429).toFixed(1)} ms after its 429`);
  }
  // the hosts were crawled side by side: less than the two crawls back to back
  const span = (o) => Math.max(...o.arrivals()) - Math.min(...o.arrivals());
  assert.ok(took < span(a) + span(b), `took ${took.toFixed(0)} ms; A alone ${span(a).toFixed(0)}, B ${span(b).toFixed(0)}`);
  const firstB = Math.min(...b.arrivals());
  const lastA = Math.max(...a.arrivals());
  assert.ok(firstB < lastA, 'B was being crawled while A still was');
});

test('docs/API.md and README-crawler.md show exactly the crawler that was tested', () => {
  const source = readFileSync(new URL('./crawler.mjs', import.meta.url), 'utf8');
  const start = source.indexOf('// --- README snippet ---\n');
  const end = source.indexOf('// --- end of README snippet ---');
  assert.ok(start >= 0 && end > start, 'crawler.mjs lost its README snippet markers');
  const snippet = source.slice(start + '// --- README snippet ---\n'.length, end).trimEnd();
  for (const doc of ['./README-crawler.md', '../../docs/API.md']) {
    const text = readFileSync(new URL(doc, import.meta.url), 'utf8');
    assert.ok(
      text.includes(`import { Frontier, Limiter } from 'hostpace';\n\n${snippet}\n`),
      `${doc} differs from the snippet in tests/js/crawler.mjs`,
    );
  }
  // lines of logic: not blank, not a comment, not just a closing brace or `continue;`
  const logic = snippet.split('\n').filter((l) => !/^\s*(\/\/.*|[})\];]*|continue;)?\s*$/.test(l));
  assert.ok(logic.length <= 18, `the short crawler has grown to ${logic.length} lines:\n${logic.join('\n')}`);
});

describe('crawler.mjs as a script (a fresh process)', () => {
  let site, stdout;
  before(async () => {
    site = await Origin.start({ '/': page(() => ['/next']), '/next': page(() => ['/']) });
    const script = fileURLToPath(new URL('./crawler.mjs', import.meta.url));
    // asynchronous on purpose: the origin answering it lives in this process
    ({ stdout } = await promisify(execFile)(process.execPath, [script, site.url('/')], { timeout: 30_000 }));
  });
  after(() => site.close());

  test('node tests/js/crawler.mjs URL crawls the site and prints each status', () => {
    assert.deepEqual(stdout.trim().split('\n').sort(), [`200 ${site.url('/')}`, `200 ${site.url('/next')}`]);
    assert.deepEqual(site.log.map((e) => e.path), ['/robots.txt', '/', '/next']);
  });

  // Departures are now confirmed with the core right before each fetch (Limiter.depart), so a late timer never
  // shortens a gap. What remains is after the departure: the first fetch() of a Node process loads undici and
  // opens a connection (~20-40 ms, past 60 ms on a busy 2-core machine) before its request reaches the origin, the
  // second reuses the connection. The origin sees departure + latency, so its gaps carry that latency difference:
  // allowed here, bounded at 100 ms (a departure not confirmed would be off by the whole timer error).
  test('run cold, the crawler keeps its 1 s between requests up to first-connection latency', () => {
    assertSpacing(assert, site.arrivals(), 1000, Math.max(TOL, 100), 'fresh-process crawl');
  });
});
