// What a token may read of the hosts it crawls: `GET /v1/hosts` lists only the hosts that token used, and
// `GET /v1/hosts/{host}` shows only that token's own departures, which must be what the origin itself received
// (its access log: the time of each arrival and the status it answered), through either route a crawler may
// take — the gateway's own fetch, or the permission API with the crawler sending itself.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { originPool } from '../js/helpers.mjs';
import { Gateway } from './gateway.mjs';

const ALICE = 'alice-token-1d93e0';
const BOB = 'bob-token-6a02f7';
const CAROL = 'carol-token-e5c4b8';
/** How far a departure the gateway shows may be from the origin's own stamp of its arrival (ms). */
const MATCH_MS = 50;
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: '10',
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_MAX_BACKOFF_SEC: '5',
  CRAWL_MAX_WAIT_SEC: '30',
};

const as = (token) => ({ authorization: `Bearer ${token}` });

/**
 * `shown` (a token's departures, as the gateway shows them) against `arrived` (the origin's log entries of that
 * token's requests): one departure per arrival, in order, each within MATCH_MS of its arrival, with its status.
 */
function assertMatches(shown, arrived, what) {
  const line = (d) => `${d.atMs?.toFixed(1) ?? d.t.toFixed(1)}:${d.status}`;
  assert.equal(shown.length, arrived.length, `${what}: shown ${shown.map(line)} for arrivals ${arrived.map(line)}`);
  shown.forEach((d, i) => {
    const a = arrived[i];
    assert.ok(Math.abs(d.atMs - a.t) <= MATCH_MS, `${what} ${i} (${a.path}): shown at ${d.atMs}, arrived at ${a.t}`);
    assert.equal(d.status, a.status, `${what} ${i} (${a.path}): status`);
    assert.equal(d.purpose, ['/robots.txt', '/moved-robots.txt'].includes(a.path) ? 'robots' : 'request', `${what} ${i}: purpose`);
    assert.ok(d.waitMs >= 0 && typeof d.layer === 'string', `${what} ${i}: ${JSON.stringify(d)}`);
  });
}

describe('gateway: a token reads only its own hosts and departures', () => {
  let gateway;
  const origins = originPool();
  let shared; // crawled by both tokens through /v1/fetch
  let bobs; // crawled by bob alone, through the permission API
  let moved; // crawled by carol alone: its robots.txt is a redirect

  before(async () => {
    gateway = await Gateway.start({ vars: VARS, token: `${ALICE},${BOB},${CAROL}` });
    shared = await origins.start({
      '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' },
      '/a2': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }],
    });
    bobs = await origins.start({ '/robots.txt': { status: 404 } });
    moved = await origins.start({
      '/robots.txt': { status: 301, headers: { Location: '/moved-robots.txt' } },
      '/moved-robots.txt': { status: 200, body: 'User-agent: *\nAllow: /\n' },
    });
    await shared.warm();
    await bobs.warm();
    await moved.warm();
    // alice: robots.txt first, then three pages, one answered 429 once (retried by the gateway after 1 s)
    for (const p of ['/a1', '/a2', '/a3']) {
      const res = await gateway.fetchVia(shared.url(p), as(ALICE));
      assert.equal(res.status, 200, await res.text());
    }
    const res0 = await gateway.fetchVia(moved.url('/m1'), as(CAROL));
    assert.equal(res0.status, 200, await res0.text());
    // bob on the same host, through the gateway's fetch
    const res = await gateway.fetchVia(shared.url('/b1'), as(BOB));
    assert.equal(res.status, 200, await res.text());
    // bob on his own host, through the permission API: acquire, depart, send himself, observe; the last one
    // without /v1/depart (he sends at the instant acquire gave him)
    for (const p of ['/p1', '/p2', '/p3']) {
      const url = bobs.url(p);
      const dep = await (await gateway.post('/v1/acquire', { url }, as(BOB))).json();
      assert.ok(dep.departureId, JSON.stringify(dep));
      if (p === '/p3') await new Promise((r) => setTimeout(r, dep.waitMs));
      else for (;;) {
        const d = await (await gateway.post('/v1/depart', { url, departureId: dep.departureId }, as(BOB))).json();
        if (d.waitMs === 0) break;
        await new Promise((r) => setTimeout(r, d.waitMs));
      }
      const answer = await fetch(url);
      await answer.arrayBuffer();
      const observed = await gateway.post('/v1/observe', { url, departureId: dep.departureId, status: answer.status }, as(BOB));
      assert.equal(observed.status, 200, await observed.text());
    }
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  const get = async (path, token) => {
    const res = await gateway.request(path, { headers: as(token) });
    return { status: res.status, body: await res.json() };
  };

  test('GET /v1/hosts lists the hosts the token used, each with a one-line summary', async () => {
    const alice = await get('/v1/hosts', ALICE);
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    assert.deepEqual(alice.body.hosts.map((h) => h.host), [shared.host]);
    assert.equal(alice.body.total, 1);
    const [line] = alice.body.hosts;
    assert.equal(line.report, undefined, 'no report without detail');
    const summary = /^(\d+(?:\.\d+)?) req\/s · 5 recent departures · next (now|in \d+ ms) · robots\.txt: rules$/;
    assert.match(line.summary, summary);
    // /a2's 429 halved the host's 10/s; the successes after it (reported for that) bring it back a little
    const rate = Number(line.summary.match(summary)[1]);
    assert.ok(rate > 5 && rate < 10, `${line.summary}: halved by the 429, recovering`);
    assert.ok(Math.abs(alice.body.nowMs - Date.now()) < 1000, `the gateway's clock ${alice.body.nowMs}`);

    const bob = await get('/v1/hosts?detail=1', BOB);
    assert.deepEqual(bob.body.hosts.map((h) => h.host).sort(), [shared.host, bobs.host].sort());
    for (const h of bob.body.hosts) assert.equal(h.report.host, h.host);
    const limited = await get('/v1/hosts?limit=1', BOB);
    assert.equal(limited.body.hosts.length, 1);
    assert.equal(limited.body.total, 2);
  });

  test('a host\'s departures are the token\'s own and equal the origin\'s log', async () => {
    const alice = await get(`/v1/hosts/${shared.host}`, ALICE);
    assert.equal(alice.status, 200, JSON.stringify(alice.body));
    // robots.txt (fetched for alice's first request), /a1, /a2 (429), /a2 again (200), /a3; never bob's /b1
    const alicesArrivals = shared.log.filter((e) => e.path !== '/b1');
    assert.deepEqual(alicesArrivals.map((e) => e.path), ['/robots.txt', '/a1', '/a2', '/a2', '/a3']);
    assertMatches(alice.body.departures, alicesArrivals, 'alice');
    assert.equal(alice.body.departures[2].status, 429);

    const bob = await get(`/v1/hosts/${shared.host}`, BOB);
    assertMatches(bob.body.departures, shared.log.filter((e) => e.path === '/b1'), 'bob on the shared host');
    const own = await get(`/v1/hosts/${bobs.host}`, BOB);
    // bob's own host: robots.txt (404) fetched by the gateway for his first acquire, then what he sent himself
    assertMatches(own.body.departures, bobs.log, 'bob on his host');
    assert.deepEqual(bobs.log.map((e) => e.path), ['/robots.txt', '/p1', '/p2', '/p3']);
    // carol's host: robots.txt, its redirect's target, then her page
    const carol = await get(`/v1/hosts/${moved.host}`, CAROL);
    assert.deepEqual(moved.log.map((e) => e.path), ['/robots.txt', '/moved-robots.txt', '/m1']);
    assertMatches(carol.body.departures, moved.log, 'carol, robots.txt redirected');
  });

  test('another token\'s host is 404 and never listed, even after calls naming it; a bad query is 400', async () => {
    // calls about a departure at bob's host, which alice never used, are refused and make it none of hers
    const bogus = { url: bobs.url('/x'), departureId: '0123456789abcdef0123456789abcdef' };
    for (const [path, body] of [['/v1/cancel', bogus], ['/v1/depart', bogus], ['/v1/observe', { ...bogus, status: 200 }]]) {
      const refused = await gateway.post(path, body, as(ALICE));
      assert.equal(refused.status, 403, path);
      assert.equal((await refused.json()).error.code, 'not_your_departure', path);
    }
    assert.deepEqual((await get('/v1/hosts', ALICE)).body.hosts.map((h) => h.host), [shared.host]);
    const res = await get(`/v1/hosts/${bobs.host}`, ALICE);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'unknown_host');
    for (const [query, says] of [
      ['?detail=yes', 'detail'],
      ['?limit=0', 'limit'],
      ['?limit=501', 'limit'],
      ['?limit=%2B5', 'limit'],
      ['?limit=2&limit=3', 'limit is given twice'],
      ['?host=x', 'unknown query parameter "host"'],
    ]) {
      const bad = await get(`/v1/hosts${query}`, ALICE);
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.error.code, 'invalid_query');
      assert.ok(bad.body.error.message.includes(says), `${query}: ${bad.body.error.message}`);
    }
    const anonymous = await gateway.request('/v1/hosts', { headers: { authorization: null } });
    assert.equal(anonymous.status, 401);
  });
});
