// GatewayLimiter (the npm package's Limiter shape backed by the gateway's /v1/acquire and /v1/observe) against
// the running gateway: two crawler processes share one budget per host, as if one process had crawled.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { GatewayError, GatewayLimiter, Limiter, audit } from '../../pkg/node.js';
import { Origin, assertSpacing, originPool, within } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway } from './gateway.mjs';
import { assertHeld, firstThrottled } from './held.mjs';

const RATE = 4;
const crawler = fileURLToPath(new URL('./crawler-process.mjs', import.meta.url));

function runCrawler(gateway, urls) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [crawler, gateway.base, gateway.token, JSON.stringify(urls)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`crawler exited ${code}: ${err}`))));
  });
}

describe('GatewayLimiter against the running gateway', () => {
  let gateway;
  // each test its own origin (its own host): a 429 one test asks for slows that host's later requests (a lone
  // token's pushback reaches the host), which another test must not inherit
  const origins = originPool();
  before(async () => {
    gateway = await Gateway.start({
      vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_RATE_PER_SEC: String(RATE), CRAWL_BURST_CAPACITY: '1' },
    });
  });
  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('per-call options as with Limiter: onDecision per attempt, userAgent, timeoutMs', async () => {
    const origin = await origins.start({
      '/retry-options': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: 'ok' }],
    });
    const limiter = new GatewayLimiter(gateway.base, gateway.token);
    const events = [];
    const res = await limiter.fetch(origin.url('/retry-options'), { onDecision: (e) => events.push(e), userAgent: 'fleetbot/1.0' });
    assert.equal(res.status, 200);
    assert.deepEqual(events.map((e) => [e.host, e.attempt, e.status]), [[origin.host, 1, 429], [origin.host, 2, 200]]);
    assert.equal(events[1].layer, 'cooldown');
    assert.ok(events[1].waitMs >= 1000 - GATEWAY_TOL, `the retry waited ${events[1].waitMs} ms`);
    const sent = origin.log.filter((e) => e.path === '/retry-options');
    assert.deepEqual(sent.map((e) => e.headers['user-agent']), ['fleetbot/1.0', 'fleetbot/1.0']);
    // a turn 2 s away, a call bounded at 200 ms: TimeoutError, nothing sent
    await limiter.fetch(origin.url('/cooled'), { timeoutMs: 5000 }).then((r) => r.arrayBuffer());
    await limiter.acquire(origin.url('/ahead-1'));
    await limiter.acquire(origin.url('/ahead-2'));
    await assert.rejects(limiter.fetch(origin.url('/late'), { timeoutMs: 200 }), (e) => e.name === 'TimeoutError');
    assert.equal(origin.log.filter((e) => e.path === '/late').length, 0);
  });

  test("a URL the host's robots.txt disallows rejects as with Limiter, and is never sent", async () => {
    const site = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' } });
    try {
      const limiter = new GatewayLimiter(gateway.base, gateway.token);
      assert.equal((await limiter.fetch(site.url('/open'))).status, 200);
      const refused = await limiter.fetch(site.url('/private/a')).then(
        () => assert.fail('a disallowed URL was fetched'),
        (e) => e,
      );
      assert.ok(refused instanceof GatewayError);
      assert.equal(refused.name, 'RobotsDisallowed');
      assert.equal(refused.code, 'disallowed_by_robots');
      assert.equal(refused.url, site.url('/private/a'));
      assert.equal(refused.rule, 'Disallow: /private (line 2)');
      assert.deepEqual(site.log.map((e) => e.path), ['/robots.txt', '/open']);
    } finally {
      await site.close();
    }
  });

  test('two crawler processes, one host: the origin log passes audit as if one process had crawled', async () => {
    const site = await Origin.start({});
    try {
      const urls = (p) => Array.from({ length: 8 }, (_, i) => site.url(`/${p}${i}`));
      const [a, b] = await within(Promise.all([runCrawler(gateway, urls('a')), runCrawler(gateway, urls('b'))]), 30_000);
      assert.deepEqual([...a.statuses, ...b.statuses], Array(16).fill(200));
      const times = site.log.filter((e) => e.path !== '/__warm').map((e) => e.t);
      assert.equal(times.length, 17, '16 pages and one robots.txt');
      // Each process confirms its departure with the gateway (/v1/depart) and then sends: two more loopback hops,
      // through another process's event loop, between the confirmation and the arrival (within GATEWAY_TOL).
        assert.deepEqual(audit({ ratePerSec: RATE, burstCapacity: 1 }, times, [], GATEWAY_TOL), [], "the origin's log passes audit");
      assertSpacing(assert, times, 1000 / RATE, GATEWAY_TOL, 'two processes, one budget');
    } finally {
      await site.close();
    }
  });

  test('the same shape as Limiter: acquire, observe, schedule, fetch (one line changes)', async () => {
    const origin = await origins.start({
      '/retry': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: 'ok' }],
    });
    const local = new Limiter({ ratePerSec: RATE, burstCapacity: 1 });
    const shared = new GatewayLimiter(gateway.base, gateway.token);
    for (const name of ['acquire', 'depart', 'observe', 'schedule', 'fetch']) {
      assert.equal(typeof local[name], 'function');
      assert.equal(typeof shared[name], 'function', name);
    }
    const d = await shared.acquire(origin.url('/x'));
    assert.equal(d.host, origin.host);
    assert.equal(typeof d.waitMs, 'number');
    assert.equal(d.reserved, true);
    const value = await shared.schedule(origin.url('/task'), () => 42);
    assert.equal(value, 42);
    const res = await shared.fetch(origin.url('/retry'));
    assert.equal(res.status, 200);
    assert.equal(res.hostpaceAttempts, 2, 'the gateway said retry once (its core verdict), after the cooldown');
    assertSpacing(assert, origin.arrivals('/retry'), 1000, GATEWAY_TOL, 'the retry after Retry-After: 1');
    const observed = await shared.observe(origin.url('/x'), { status: 200, headers: {} }, undefined, {
      departureId: d.departureId,
    });
    assert.equal(observed.host, origin.host);
  });

  test('schedule: an aborted wait rejects with its reason, a failing task with its error, and neither runs on', async () => {
    const origin = await origins.start({});
    const shared = new GatewayLimiter(gateway.base, gateway.token);
    const url = origin.url('/lifecycle');
    await shared.acquire(url);
    await shared.acquire(url); // two reserved ahead: the next one waits about 500 ms
    const controller = new AbortController();
    const reason = new Error('stop');
    let ran = false;
    const pending = shared.schedule(url, () => (ran = true), { signal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(within(pending, 5000), (e) => e === reason);
    const boom = new Error('boom');
    await assert.rejects(
      within(
        shared.schedule(url, () => {
          throw boom;
        }),
        5000,
      ),
      (e) => e === boom,
    );
    assert.equal(await within(shared.schedule(url, () => 'after'), 5000), 'after');
    assert.equal(ran, false);
  });

  test('errors are GatewayErrors with the status and code', async () => {
    const origin = await origins.start({});
    const wrong = new GatewayLimiter(gateway.base, 'wrong-token');
    await assert.rejects(wrong.acquire(origin.url('/')), (e) => e instanceof GatewayError && e.status === 401 && e.code === 'unauthorized');
    const shared = new GatewayLimiter(gateway.base, gateway.token);
    await assert.rejects(shared.acquire('ftp://example.com/'), (e) => e.status === 400 && e.code === 'invalid_url');
    assert.throws(() => new GatewayLimiter('not a url', 't'), /invalid gateway URL/);
    assert.throws(() => new GatewayLimiter(gateway.base, ''), /invalid token/);
    await assert.rejects(shared.schedule(origin.url('/'), 'not a function'), /invalid task/);
  });
});

describe('GatewayLimiter: requests queued when the host answers 429 are held behind its cooldown', () => {
  const HELD_RATE = 5;
  let gateway;
  let origin;
  before(async () => {
    gateway = await Gateway.start({
      vars: {
        CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
        CRAWL_RATE_PER_SEC: String(HELD_RATE),
        CRAWL_BURST_CAPACITY: '1',
        CRAWL_ROBOTS_TTL_SEC: '0',
      },
    });
    // the first calls start the Worker and the token's ledger, which this test is not about
    const warm = await Origin.start({});
    await new GatewayLimiter(gateway.base, gateway.token).fetch(warm.url('/warm')).then((r) => r.arrayBuffer());
    await warm.close();
    origin = await Origin.start(firstThrottled());
  });
  after(async () => {
    await gateway?.stop();
    await origin?.close();
  });

  test('8 concurrent fetch calls, one host: nothing arrives in the cooldown, then the slower pace', async () => {
    const limiter = new GatewayLimiter(gateway.base, gateway.token);
    const calls = Array.from({ length: 8 }, async (_, i) => {
      const res = await limiter.fetch(origin.url(`/g${i}`));
      await res.arrayBuffer();
      return { status: res.status, attempts: res.hostpaceAttempts };
    });
    const answers = await within(Promise.all(calls), 30_000, 'the calls did not settle within 30 s');
    const arrived = origin.log.map((e) => `${e.path}:${e.status}@${Math.round(e.t - origin.log[0].t)}`).join(' ');
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(200), `${JSON.stringify(answers)}; ${arrived}`);
    assert.equal(origin.log.length, 9, `8 requests and one retry: ${arrived}`);
    const { gaps } = assertHeld(origin.log, { ratePerSec: HELD_RATE, tolMs: GATEWAY_TOL, what: 'GatewayLimiter, 8 calls' });
    console.log(`GatewayLimiter held: arrivals after the 429, ms after the one before: ${gaps.map(Math.round).join(', ')}`);
  });
});
