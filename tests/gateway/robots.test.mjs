// robots.txt at the gateway, end to end: the real Worker in workerd (wrangler dev), real origins on 127.0.0.1 that
// keep their own access logs. Judged from the origin's side: no disallowed path ever requested, robots.txt
// requested once per cache period, nothing but robots.txt requested while it answers 503, redirects followed, and
// the rules kept across a restart.
//
// Run: scripts/build-worker.sh && npm run build:pkg && node --test --test-concurrency=1 tests/gateway/

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Origin, originPool, sleep } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway, tempDir } from './gateway.mjs';

const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: '20',
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_ROBOTS_RETRY_SEC: '1',
};

const RULES = [
  'User-agent: otherbot',
  'Disallow: /',
  '',
  'User-agent: *',
  'Disallow: /private',
  'Allow: /private/open',
  'Disallow: /*.pdf$',
  '',
].join('\n');

/** The answer's error code and message, checking the error shape. */
async function errorOf(res) {
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = await res.json();
  assert.equal(typeof body.error?.message, 'string');
  return body.error;
}

/** GET `paths` of `origin` through the gateway one after another: `[status, code?]` each. */
async function fetchAll(gateway, origin, paths) {
  const out = [];
  for (const path of paths) {
    const res = await gateway.fetchVia(origin.url(path));
    out.push(res.status === 200 ? [200, await res.text()] : [res.status, (await errorOf(res)).code]);
  }
  return out;
}

describe('gateway: robots.txt rules (wrangler dev, real origins)', () => {
  let gateway;
  const origins = originPool();
  const origin = origins.start;
  before(async () => {
    gateway = await Gateway.start({ vars: VARS });
  });
  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('a disallowed URL is refused with 403 quoting the rule, and never reaches the origin', async () => {
    const o = await origin({ '/robots.txt': { status: 200, headers: { 'Content-Type': 'text/plain' }, body: RULES } });
    const paths = ['/public', '/private/x', '/private/open/y', '/doc.pdf', '/doc.pdf?v=2', '/PRIVATE'];
    const res = await gateway.fetchVia(o.url('/private/x'));
    assert.equal(res.status, 403);
    const error = await errorOf(res);
    assert.equal(error.code, 'disallowed_by_robots');
    assert.match(error.message, /Disallow: \/private \(line 5\)/, error.message);
    assert.match(error.message, /hostpace-gateway/, 'names the crawler whose group applied');
    const answers = await fetchAll(gateway, o, paths);
    assert.deepEqual(
      answers.map(([status]) => status),
      [200, 403, 200, 403, 200, 200],
      JSON.stringify(answers),
    );
    // /v1/acquire refuses it too (the crawler fetching on its own never gets a departure for it)
    const acquired = await gateway.post('/v1/acquire', { url: o.url('/private/z') });
    assert.equal(acquired.status, 403);
    assert.equal((await errorOf(acquired)).code, 'disallowed_by_robots');
    const requested = o.log.map((e) => e.url);
    assert.deepEqual(requested, ['/robots.txt', '/public', '/private/open/y', '/doc.pdf?v=2', '/PRIVATE']);
    const report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    assert.equal(report.robots.status, 'rules');
    assert.equal(report.robots.rules, 4);
    assert.equal(report.robots.failures, 0);
    assert.ok(report.robots.ageSec >= 0 && report.robots.ageSec < 60, JSON.stringify(report.robots));
  });

  test('a 404 robots.txt allows everything, and is asked once', async () => {
    const o = await origin({ '/robots.txt': { status: 404, body: 'not found' } });
    const answers = await fetchAll(gateway, o, ['/private/a', '/', '/x.pdf']);
    assert.deepEqual(answers.map(([s]) => s), [200, 200, 200]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/private/a', '/', '/x.pdf']);
    const report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    assert.equal(report.robots.status, 'allowed');
  });

  test('while robots.txt answers 503 nothing else is requested (503 robots_unavailable), until a retry succeeds', async () => {
    const unavailable = { status: 503, headers: { 'Retry-After': '1' }, body: 'down' };
    const o = await origin({
      '/robots.txt': [unavailable, unavailable, { status: 200, body: 'User-agent: *\nDisallow: /private\n' }],
    });
    const first = await gateway.fetchVia(o.url('/a'));
    assert.equal(first.status, 503);
    assert.equal(first.headers.get('retry-after'), '1', 'robots.txt is retried after CRAWL_ROBOTS_RETRY_SEC');
    const error = await errorOf(first);
    assert.equal(error.code, 'robots_unavailable');
    assert.match(error.message, /robots\.txt/);
    // at once again: refused without asking the origin anything
    assert.deepEqual(await fetchAll(gateway, o, ['/b']), [[503, 'robots_unavailable']]);
    assert.equal(o.log.length, 1);
    let report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    assert.deepEqual([report.robots.status, report.robots.failures], ['unreachable', 1]);
    // the retry (due after 1 s) fails too: the next waits 2 s
    await sleep(1100);
    assert.deepEqual(await fetchAll(gateway, o, ['/c']), [[503, 'robots_unavailable']]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/robots.txt']);
    await sleep(2100);
    assert.deepEqual(await fetchAll(gateway, o, ['/d', '/private/e']), [[200, 'page /d'], [403, 'disallowed_by_robots']]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/robots.txt', '/robots.txt', '/d']);
    report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    assert.deepEqual([report.robots.status, report.robots.failures], ['rules', 0]);
  });

  test('redirects of robots.txt are followed (to another host too), each hop at its own host', async () => {
    const b = await origin({
      '/rules.txt': (ctx) => ({ status: 302, headers: { Location: '/rules2.txt' }, body: `${ctx.n}` }),
      '/rules2.txt': { status: 200, body: 'User-agent: *\nDisallow: /secret\n' },
    });
    const a = await origin({ '/robots.txt': { status: 301, headers: { Location: b.url('/rules.txt') } } });
    const answers = await fetchAll(gateway, a, ['/secret/1', '/open']);
    assert.deepEqual(answers.map(([s]) => s), [403, 200]);
    assert.deepEqual(a.log.map((e) => e.path), ['/robots.txt', '/open']);
    assert.deepEqual(b.log.map((e) => e.path), ['/rules.txt', '/rules2.txt']);
    assert.ok(b.log.every((e) => e.headers['user-agent'].startsWith('hostpace-gateway/')));
  });

  test('more than five redirects: robots.txt counts as unavailable, everything allowed', async () => {
    const routes = { '/robots.txt': { status: 301, headers: { Location: '/r1' } } };
    for (let i = 1; i <= 9; i++) routes[`/r${i}`] = { status: 302, headers: { Location: `/r${i + 1}` } };
    const o = await origin(routes);
    assert.deepEqual((await fetchAll(gateway, o, ['/page'])).map(([s]) => s), [200]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/r1', '/r2', '/r3', '/r4', '/r5', '/page']);
    // each hop took a departure of its own at 20/s (burst 1): 7 requests span at least 300 ms (sent without
    // pacing they would arrive within a few ms); single gaps are not judged, arrivals jitter by up to GATEWAY_TOL
    const times = o.arrivals();
    const span = Math.max(...times) - Math.min(...times);
    assert.ok(span >= 6 * 50 - GATEWAY_TOL, `7 requests at 20/s spanned ${span.toFixed(0)} ms`);
  });
});

test('the rules survive a restart: not fetched again before their time, then once per CRAWL_ROBOTS_TTL_SEC', async () => {
  const vars = { ...VARS, CRAWL_ROBOTS_TTL_SEC: '8' };
  const persistTo = tempDir();
  const o = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /x\n' } });
  let gateway = await Gateway.start({ vars, persistTo });
  try {
    assert.deepEqual((await fetchAll(gateway, o, ['/a'])).map(([s]) => s), [200]);
    const fetchedAt = o.log[0].t;
    await gateway.stop();
    gateway = await Gateway.start({ vars, persistTo });
    assert.deepEqual((await fetchAll(gateway, o, ['/x/1', '/b'])).map(([s]) => s), [403, 200]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/a', '/b'], 'robots.txt not fetched again');
    await sleep(Math.max(0, fetchedAt + 8100 - Date.now()));
    assert.deepEqual((await fetchAll(gateway, o, ['/c', '/d'])).map(([s]) => s), [200, 200]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/a', '/b', '/robots.txt', '/c', '/d']);
  } finally {
    await gateway.stop();
    await o.close();
  }
});

test("a refresh reserved further ahead than CRAWL_FETCH_TIMEOUT_SEC has its whole timeout, from its departure", async () => {
  // Crawl-delay 3 s: the refresh's turn comes 3 s after the request before it, and the fetch may take 1 s from then
  const vars = { ...VARS, CRAWL_ROBOTS_TTL_SEC: '1', CRAWL_FETCH_TIMEOUT_SEC: '1' };
  const o = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nCrawl-delay: 3\n' } });
  const gateway = await Gateway.start({ vars });
  try {
    assert.deepEqual(await fetchAll(gateway, o, ['/a', '/b']), [[200, 'page /a'], [200, 'page /b']]);
    assert.deepEqual(o.log.map((e) => e.path), ['/robots.txt', '/a', '/robots.txt', '/b']);
  } finally {
    await gateway.stop();
    await o.close();
  }
});
