// Two tenants on one gateway: a victim crawling its host and an attacker holding a valid token of its own, doing
// its worst to that host's budget. Every protection is judged from the victim's origin's access log (real
// origins on 127.0.0.1, the real gateway in workerd via wrangler dev), not from what the gateway says.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Origin, RemoteOrigin, assertSpacing, clockMs, gaps, originPool, sleep, until } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway } from './gateway.mjs';

const VICTIM = 'victim-token-4b1e0f';
const ATTACKER = 'attacker-token-9c27d5';
const RATE = 5; // per second, burst 1: the victim's requests 200 ms apart
const BACKOFF_SEC = 2;
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: String(RATE),
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_MAX_BACKOFF_SEC: String(BACKOFF_SEC),
  CRAWL_ROBOTS_TTL_SEC: '0',
  CRAWL_MAX_WAIT_SEC: '30',
  CRAWL_MAX_RESERVATIONS_PER_TOKEN: '4',
};

const as = (token) => ({ authorization: `Bearer ${token}` });

/** The tenants' calls to one gateway. */
function tenant(gateway, token) {
  return {
    post: (path, body) => gateway.post(path, body, as(token)),
    get: (path) => gateway.request(path, { headers: as(token) }),
    fetchVia: (url, headers = {}) => gateway.fetchVia(url, { ...as(token), ...headers }),
    async acquire(url, headers = {}) {
      const res = await gateway.post('/v1/acquire', { url }, { ...as(token), ...headers });
      return { status: res.status, body: await res.json() };
    },
  };
}

/** The victim fetches `paths` one after the other through the gateway; every answer must be 200. */
async function crawl(victim, o, paths) {
  for (const p of paths) {
    const res = await victim.fetchVia(o.url(p));
    const body = await res.text();
    assert.equal(res.status, 200, `${p}: ${body}`);
  }
}

/**
 * `n` concurrent /v1/fetch of `o` by `tenant`, once the flood is at the host's object (its first request has
 * arrived): the statuses, to come.
 */
async function floodOf(tenant, o, n) {
  const flood = Array.from({ length: n }, async (_, i) => {
    const res = await tenant.fetchVia(o.url(`/flood${i}`));
    await res.arrayBuffer();
    return res.status;
  });
  await until(() => o.arrivals().length > 0, { withinMs: 5000, message: 'the flood never reached the origin' });
  await sleep(100);
  return flood;
}

/**
 * An origin's log as turns, `V` for the victim's requests (paths from `/v`) and `f` for the flood's, and the runs
 * of the flood between two of the victim's.
 */
function turnsIn(log) {
  const order = log.map((e) => (e.path.startsWith('/v') ? 'V' : 'f')).join('');
  const between = order.slice(order.indexOf('V'), order.lastIndexOf('V') + 1).split('V').slice(1, -1);
  return { order, between };
}

describe('gateway: one tenant cannot freeze, hoard or steal another tenant\'s budget', () => {
  let gateway;
  let victim;
  let attacker;
  const origins = originPool();
  const origin = origins.start;

  before(async () => {
    gateway = await Gateway.start({ vars: VARS, token: `${VICTIM},${ATTACKER}` });
    victim = tenant(gateway, VICTIM);
    attacker = tenant(gateway, ATTACKER);
    // the first calls start the Worker, each token's ledger object and a host's object, which the timing checks
    // below are not about
    const warm = await origin({});
    await crawl(victim, warm, ['/warm']);
    await (await attacker.fetchVia(warm.url('/warm'))).arrayBuffer();
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('a published policy of one request a year slows the host to one per maxBackoffSec, not a year', async () => {
    const o = await origin({});
    const d = await attacker.acquire(o.url('/a'));
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const year = { 'RateLimit-Policy': '"x";q=1;w=31536000' };
    const res = await attacker.post('/v1/observe', { url: o.url('/a'), departureId: d.body.departureId, status: 200, headers: year });
    assert.equal(res.status, 200, await res.text());
    o.log.length = 0;
    await crawl(victim, o, ['/v1', '/v2', '/v3']);
    const times = o.arrivals();
    assert.equal(times.length, 3);
    for (const gap of gaps(times)) {
      assert.ok(gap <= BACKOFF_SEC * 1000 + GATEWAY_TOL, `the victim's requests ${gap} ms apart: at most ${BACKOFF_SEC} s`);
    }
  });

  test('reports need a departure issued to the same token for that host, once', async () => {
    const o = await origin({});
    const other = await origin({});
    const mine = await victim.acquire(o.url('/mine'));
    const theirs = await attacker.acquire(other.url('/theirs'));
    const report = (t, url, departureId) =>
      t.post('/v1/observe', { url, departureId, status: 429, headers: { 'Retry-After': '2' } });
    for (const [what, res] of [
      ['no departure', await report(attacker, o.url('/x'), undefined)],
      ['a guessed id', await report(attacker, o.url('/x'), '0'.repeat(32))],
      ["the victim's departure", await report(attacker, o.url('/mine'), mine.body.departureId)],
      ["its own departure of another host", await report(attacker, o.url('/x'), theirs.body.departureId)],
    ]) {
      assert.equal(res.status, 403, what);
      assert.equal((await res.json()).error.code, 'not_your_departure', what);
    }
    const stats = await (await victim.get(`/v1/hosts/${encodeURIComponent(o.host)}`)).json();
    assert.equal(stats.stats.throttled, 0, 'no refused report cooled the host');
    const once = await victim.post('/v1/observe', { url: o.url('/mine'), departureId: mine.body.departureId, status: 200 });
    assert.equal(once.status, 200);
    const twice = await victim.post('/v1/observe', { url: o.url('/mine'), departureId: mine.body.departureId, status: 429 });
    assert.equal(twice.status, 403, 'a departure is reported on once');
  });

  test('a tenant with real departures holds the host at zero for others at most one maxBackoffSec at a time', async () => {
    const o = await origin({});
    // the attacker stocks up on real departures, then reports a 429 with each, one every 700 ms
    const ids = [];
    for (let i = 0; i < 4; i += 1) ids.push((await attacker.acquire(o.url(`/stock${i}`))).body.departureId);
    assert.ok(ids.every((id) => typeof id === 'string'), JSON.stringify(ids));
    o.log.length = 0;
    const started = Date.now();
    const reports = (async () => {
      for (const [i, id] of ids.entries()) {
        const res = await attacker.post('/v1/observe', {
          url: o.url(`/stock${i}`),
          departureId: id,
          status: 429,
          headers: { 'Retry-After': '3600' },
        });
        assert.equal(res.status, 200, await res.text());
        await sleep(700);
      }
    })();
    // meanwhile the victim crawls for about six seconds
    const victimCrawl = (async () => {
      let n = 0;
      while (Date.now() - started < 6000) {
        await crawl(victim, o, [`/p${n}`]);
        n += 1;
      }
    })();
    await Promise.all([reports, victimCrawl]);
    const times = [started, ...o.arrivals()];
    const longest = Math.max(...gaps(times));
    assert.ok(longest <= BACKOFF_SEC * 1000 + 3 * GATEWAY_TOL, `the victim waited ${longest} ms at most: ≤ one max backoff`);
    assert.ok(o.arrivals().length >= 10, `the victim kept crawling: ${o.arrivals().length} requests in 6 s`);
  });

  test('a tenant alone at a host cannot leave it slowed for a tenant that comes later', async () => {
    const o = await origin({});
    // alone at the host, the attacker reports a 429 with each of its departures, each after the last cooldown:
    // three incidents of a streak, which slow the host for real pushback
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await attacker.acquire(o.url(`/alone${i}`))).body.departureId);
    for (const [i, id] of ids.entries()) {
      const res = await attacker.post('/v1/observe', {
        url: o.url(`/alone${i}`),
        departureId: id,
        status: 429,
        headers: { 'Retry-After': '3600' },
      });
      assert.equal(res.status, 200, await res.text());
      await sleep(BACKOFF_SEC * 1000 + 200);
    }
    const slowed = await (await attacker.get(`/v1/hosts/${encodeURIComponent(o.host)}`)).json();
    assert.ok(slowed.stats.ratePerSec <= RATE / 8, `the attacker's reports slowed the host: ${JSON.stringify(slowed.stats)}`);
    // the victim comes: it waits at most one cooldown, then goes at the configured pace
    o.log.length = 0;
    const started = Date.now();
    await crawl(victim, o, ['/v1', '/v2', '/v3', '/v4', '/v5']);
    const times = o.arrivals();
    assert.equal(times.length, 5);
    assert.ok(times[0] - started <= BACKOFF_SEC * 1000 + GATEWAY_TOL, `first request after ${times[0] - started} ms`);
    for (const gap of gaps(times)) {
      assert.ok(gap <= 1000 / RATE + 2 * GATEWAY_TOL, `the victim's requests ${gap} ms apart: the configured pace`);
    }
  });

  test('reservations are bounded per token, /v1/acquire obeys CRAWL_MAX_WAIT_SEC, /v1/cancel gives one back', async () => {
    const o = await origin({});
    const answers = [];
    for (let i = 0; i < 20; i += 1) answers.push(await attacker.acquire(o.url(`/hoard${i}`)));
    const granted = answers.filter((a) => a.status === 200);
    assert.equal(granted.length, 4, 'four reservations, then refused');
    assert.ok(answers.slice(4).every((a) => a.status === 429 && a.body.error.code === 'reservation_limit'));
    const cancelled = await attacker.post('/v1/cancel', { url: o.url('/hoard0'), departureId: granted[0].body.departureId });
    assert.equal(cancelled.status, 200, await cancelled.text());
    assert.equal((await attacker.acquire(o.url('/again'))).status, 200, 'one back after a cancel');
    o.log.length = 0;
    const t0 = Date.now();
    await crawl(victim, o, ['/v']);
    const waited = o.arrivals()[0] - t0;
    assert.ok(waited <= 5 * (1000 / RATE) + GATEWAY_TOL, `the victim waited ${waited} ms behind four reservations, not sixteen more`);
    const stolen = await attacker.post('/v1/cancel', { url: o.url('/x'), departureId: 'f'.repeat(32) });
    assert.equal(stolen.status, 403);
  });

  test('acquiring and giving back, over and over, holds no more of the host\'s turns', async () => {
    const o = await origin({});
    let granted = 0;
    for (let i = 0; i < 50; i += 1) {
      const a = await attacker.acquire(o.url(`/churn${i}`));
      if (a.status !== 200) continue;
      granted += 1;
      const back = await attacker.post('/v1/cancel', { url: o.url(`/churn${i}`), departureId: a.body.departureId });
      assert.equal(back.status, 200, await back.text());
    }
    assert.ok(granted <= 10, `${granted} of 50 reservations granted: a given-back one counts until its instant`);
    const t0 = Date.now();
    await crawl(victim, o, ['/v']);
    const waited = o.arrivals()[0] - t0;
    assert.ok(waited <= 5 * (1000 / RATE) + GATEWAY_TOL, `the victim waited ${waited} ms behind the churn`);
  });

  test('a flood of /v1/fetch holds at most four of the host\'s turns: the victim goes within five', async () => {
    const o = await origin({});
    const flood = await floodOf(attacker, o, 20);
    const t0 = Date.now();
    await crawl(victim, o, ['/v']);
    const waited = o.log.find((e) => e.path === '/v').t - t0;
    assert.ok(waited <= 5 * (1000 / RATE) + GATEWAY_TOL, `the victim waited ${waited} ms behind the flood`);
    assert.deepEqual(await Promise.all(flood), Array(20).fill(200), 'the flood is served, at the host\'s pace');
    assertSpacing(assert, o.arrivals(), 1000 / RATE, GATEWAY_TOL, 'flood and victim, one host');
  });

  test('a flood and a crawl of one host take turns: between two of the victim\'s requests, one of the flood', async () => {
    const o = await origin({});
    const flood = await floodOf(attacker, o, 24);
    await crawl(victim, o, ['/v1', '/v2', '/v3', '/v4']);
    const { order, between } = turnsIn(o.log);
    assert.ok(
      between.every((run) => run.length <= 1),
      `the origin's log (f: flood, V: victim): ${order}; each victim request after its first should follow at most one of the flood`,
    );
    assert.deepEqual(await Promise.all(flood), Array(24).fill(200), 'the flood is served, at the host\'s pace');
    assertSpacing(assert, o.arrivals(), 1000 / RATE, GATEWAY_TOL, 'flood and victim, one host');
  });

  test('/v1/depart without a departure of its own is refused and slows nobody', async () => {
    const o = await origin({});
    const stop = Date.now() + 3000;
    const squat = Promise.all(
      [0, 1, 2, 3].map(async () => {
        let refused = 0;
        while (Date.now() < stop) {
          const res = await attacker.post('/v1/depart', { url: o.url('/squat') });
          assert.equal(res.status, 403);
          await res.arrayBuffer();
          refused += 1;
        }
        return refused;
      }),
    );
    await sleep(300);
    o.log.length = 0;
    const t0 = Date.now();
    await crawl(victim, o, ['/f1', '/f2', '/f3', '/f4']);
    const took = o.arrivals()[3] - t0;
    assert.ok(took <= 4 * (1000 / RATE) + 2 * GATEWAY_TOL, `four fetches took ${took} ms: the victim's own pace`);
    assert.ok((await squat).every((n) => n > 0));
  });

  test("a token reads only the hosts it has used", async () => {
    const o = await origin({});
    await crawl(victim, o, ['/mine']);
    const path = `/v1/hosts/${encodeURIComponent(o.host)}`;
    assert.equal((await victim.get(path)).status, 200);
    const other = await attacker.get(path);
    assert.equal(other.status, 404);
    assert.equal((await other.json()).error.code, 'unknown_host');
  });

  test('answers carry nothing that acts on the gateway origin; the caller\'s address never reaches the target', async () => {
    const o = await origin({
      '/h': {
        status: 200,
        headers: {
          'Strict-Transport-Security': 'max-age=31536000',
          'Access-Control-Allow-Origin': '*',
          'Clear-Site-Data': '"*"',
          'Alt-Svc': 'h3=":443"',
          'Content-Type': 'text/html',
        },
        body: '<script>parent.postMessage(localStorage.length, "*")</script>',
      },
    });
    const res = await victim.fetchVia(o.url('/h'), {
      'True-Client-IP': '10.1.2.3',
      'X-Client-IP': '10.1.2.3',
      'X-HTTP-Method-Override': 'DELETE',
    });
    await res.text();
    for (const name of ['strict-transport-security', 'access-control-allow-origin', 'clear-site-data', 'alt-svc']) {
      assert.equal(res.headers.get(name), null, name);
    }
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('content-security-policy'), 'sandbox');
    const seen = o.log.find((e) => e.path === '/h').headers;
    for (const name of ['true-client-ip', 'x-client-ip', 'x-http-method-override']) assert.equal(seen[name], undefined, name);
  });
});

describe('gateway: concurrency permits belong to the token that took them', () => {
  let gateway;
  let victim;
  let attacker;
  let o;

  before(async () => {
    // a permit's lease (the longest a waiting request is told to wait for one) within CRAWL_MAX_WAIT_SEC: a
    // request finding the permit held waits for it
    const vars = { ...VARS, CRAWL_MAX_CONCURRENCY: '1', CRAWL_LEASE_SEC: '5' };
    gateway = await Gateway.start({ vars, token: `${VICTIM},${ATTACKER}` });
    victim = tenant(gateway, VICTIM);
    attacker = tenant(gateway, ATTACKER);
    o = await Origin.start({});
  });

  after(async () => {
    await gateway?.stop();
    await o?.close();
  });

  test('tokens waiting for the one permit take it by turns: a flood does not keep it from a crawl', async () => {
    // each answer takes 300 ms, longer than the host's 200 ms spacing: the permit is what paces
    const slow = await Origin.start({ '*': { status: 200, body: 'slow', delayMs: 300 } });
    try {
      const flood = await floodOf(attacker, slow, 12);
      await crawl(victim, slow, ['/v1', '/v2', '/v3']);
      const { order, between } = turnsIn(slow.log);
      assert.ok(between.every((run) => run.length <= 1), `the origin's log (f: flood, V: victim): ${order}`);
      assert.ok(order.indexOf('V') <= 2, `the victim's first request waited behind ${order.indexOf('V')} of the flood: ${order}`);
      assert.deepEqual(await Promise.all(flood), Array(12).fill(200), 'the flood is served');
    } finally {
      await slow.close();
    }
  });

  test("another token's permit cannot be released", async () => {
    const held = await victim.acquire(o.url('/held'));
    assert.equal(held.body.reserved, true);
    assert.equal(typeof held.body.permitId, 'number');
    const attempts = [
      { url: o.url('/held'), permitId: held.body.permitId },
      { url: o.url('/held'), permitId: held.body.permitId, departureId: 'a'.repeat(32) },
    ];
    for (const body of attempts) {
      const res = await attacker.post('/v1/observe', body);
      assert.equal(res.status, 403, JSON.stringify(body));
      await res.arrayBuffer();
    }
    const stolen = await attacker.post('/v1/cancel', { url: o.url('/held'), departureId: held.body.departureId });
    assert.equal(stolen.status, 403);
    await stolen.arrayBuffer();
    const blocked = await attacker.acquire(o.url('/next'), { 'Hostpace-Mode': 'nowait' });
    assert.ok(blocked.status === 429 || blocked.body.reserved === false, `the permit is still the victim's: ${JSON.stringify(blocked)}`);
    const mine = await victim.post('/v1/observe', { url: o.url('/held'), departureId: held.body.departureId, status: 200 });
    assert.equal((await mine.json()).released, true);
    const now = await attacker.acquire(o.url('/next'));
    assert.equal(now.body.reserved, true, 'free once the victim gave it back');
  });
});

describe('gateway: a token that reserves and never departs holds no permit away from another token', () => {
  // One permit per host, leased CRAWL_LEASE_SEC (60 s, the default) once its departure goes, within
  // CRAWL_MAX_WAIT_SEC (300 s, the default) as GATEWAY.md advises: a call finding the permit held waits for it in
  // the host's object. The host paces at 0.5/s, burst 1: the victim's five fetches take some 8 s alone, longer than
  // the grace (5 s) an unconfirmed reservation keeps its permit for, so "within twice as long" says the hoarder
  // cost the victim at most one grace.
  const HOARD_RATE = 0.5;
  const FETCHES = 5;
  const HOARDS = 200; // the hoarder's /v1/acquire calls, at most
  const PARALLEL = 8;
  const FETCH_TIMEOUT_MS = 20_000; // a victim's call that takes longer counts as timed out
  let gateway;
  let victim;
  let attacker;
  const origins = originPool(RemoteOrigin);

  before(async () => {
    const vars = { ...VARS, CRAWL_MAX_CONCURRENCY: '1', CRAWL_RATE_PER_SEC: String(HOARD_RATE), CRAWL_MAX_WAIT_SEC: '300' };
    gateway = await Gateway.start({ vars, token: `${VICTIM},${ATTACKER}` });
    victim = tenant(gateway, VICTIM);
    attacker = tenant(gateway, ATTACKER);
    const warm = await Origin.start({});
    try {
      await crawl(victim, warm, ['/warm']);
      await (await attacker.fetchVia(warm.url('/warm'))).arrayBuffer();
    } finally {
      await warm.close();
    }
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  /** The victim's fetches of `paths` of `o`, one after the other: each one's status (or 'timeout'), and the time. */
  async function victimFetches(o, paths) {
    const started = clockMs();
    const statuses = [];
    for (const p of paths) {
      try {
        const res = await gateway.request(`/v1/fetch?url=${encodeURIComponent(o.url(p))}`, {
          headers: as(VICTIM),
          signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      } catch (e) {
        statuses.push(e.name === 'TimeoutError' ? 'timeout' : e.message);
      }
    }
    return { started, statuses, tookMs: clockMs() - started };
  }

  /**
   * The hoarder's /v1/acquire calls for `o`, `PARALLEL` at a time, never confirmed nor given back: each worker asks
   * again at once after a reservation, and after a refusal when its `Retry-After` says (at most a second later),
   * so the flood lasts as long as the victim's fetches. At most `HOARDS` calls, none sent after `signal` aborts
   * (which also abandons those under way). Counts answers by status.
   */
  function hoard(o, signal) {
    const counts = { sent: 0, reserved: 0, byStatus: {} };
    const worker = async () => {
      while (counts.sent < HOARDS && !signal.aborted) {
        const n = counts.sent++;
        try {
          const res = await gateway.request('/v1/acquire', {
            method: 'POST',
            headers: { ...as(ATTACKER), 'content-type': 'application/json' },
            body: JSON.stringify({ url: o.url(`/hoard${n}`) }),
            signal,
          });
          const body = await res.json();
          counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
          if (body.reserved) counts.reserved += 1;
          if (res.status !== 200) await sleep(Math.min(Number(res.headers.get('retry-after') ?? 1), 1) * 1000);
        } catch (_) {
          // abandoned when the test is done with the flood
        }
      }
    };
    return { counts, done: Promise.all(Array.from({ length: PARALLEL }, worker)) };
  }

  test('200 acquires never departed: the victim\'s five fetches take at most twice as long as alone', { timeout: 120_000 }, async () => {
    const paths = Array.from({ length: FETCHES }, (_, i) => `/v${i}`);
    // the victim alone at a host with the same settings
    const alone = await origins.start({});
    const unhindered = await victimFetches(alone, paths);
    await alone.sync();
    assert.deepEqual(unhindered.statuses, Array(FETCHES).fill(200), 'alone, every fetch is answered');
    // the hoarder floods another host with reservations it never confirms; once it holds one (and the permit)...
    const o = await origins.start({});
    const stop = new AbortController();
    const flood = hoard(o, stop.signal);
    const deadline = setTimeout(() => stop.abort(new Error('the flood ran out of time')), 60_000);
    try {
      const message = 'the hoarder never got a reservation';
      await until(() => flood.counts.reserved > 0, { withinMs: 10_000, message });
      await sleep(500);
      // ...the victim fetches from that host while the flood goes on
      const hindered = await victimFetches(o, paths);
      await o.sync();
      const arrived = o.log.filter((e) => e.path.startsWith('/v'));
      const report = `alone ${unhindered.tookMs.toFixed(0)} ms, beside the hoarder ${hindered.tookMs.toFixed(0)} ms ` +
        `(statuses ${JSON.stringify(hindered.statuses)}; the hoarder's answers ${JSON.stringify(flood.counts)})`;
      process.stdout.write(`# hoarding: ${report}\n`);
      assert.deepEqual(hindered.statuses, Array(FETCHES).fill(200), `every fetch answered, none timed out: ${report}`);
      assert.deepEqual(arrived.map((e) => e.path), paths, `the victim's requests reached the origin: ${report}`);
      assert.ok(o.log.every((e) => e.path.startsWith('/v')), 'the hoarder never departed: nothing of it arrived');
      assert.ok(hindered.tookMs <= 2 * unhindered.tookMs, `at most twice as long as alone: ${report}`);
      const span = (log, started) => log[log.length - 1].t - started;
      assert.ok(
        span(arrived, hindered.started) <= 2 * span(alone.log, unhindered.started),
        `the origin's log agrees: the last of the victim's requests arrived ${span(arrived, hindered.started).toFixed(0)} ms ` +
          `after its first call, alone ${span(alone.log, unhindered.started).toFixed(0)} ms`,
      );
    } finally {
      clearTimeout(deadline);
      stop.abort(new Error('the test is done with the flood'));
      await flood.done;
    }
  });
});
