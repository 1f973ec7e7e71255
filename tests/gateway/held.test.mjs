// Departures held behind a cooldown, judged from the origin's access log: eight clients of two tokens ask the
// gateway for one host at once; the origin answers the first request 429 + Retry-After: 2 and every later one
// 200. Every departure reserved before the 429 was reported and not yet gone is held by the core and reserved
// again behind the cooldown, so nothing arrives during it, and after it the host's slower pace holds (the
// incident halves 5/s to 2.5/s: 400 ms apart, less what each success gives back). A held departure that may no
// longer go within its caller's bound is refused visibly (503 departure_held), never sent early. The real
// gateway in workerd (wrangler dev), a real origin on 127.0.0.1.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { originPool, sleep, until, within } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway } from './gateway.mjs';
import { RETRY_AFTER_SEC, assertHeld, firstThrottled } from './held.mjs';

const TOKENS = ['held-token-a-51c0e2', 'held-token-b-93d7f4'];
const RATE = 5;
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: String(RATE),
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_ROBOTS_TTL_SEC: '0',
  CRAWL_MAX_WAIT_SEC: '30',
};

const as = (token) => ({ authorization: `Bearer ${token}` });

describe('gateway: departures reserved before a 429 are held behind its cooldown', () => {
  let gateway;
  const origins = originPool();

  before(async () => {
    gateway = await Gateway.start({ vars: VARS, token: TOKENS.join(',') });
    // the first calls start the Worker and each token's ledger object, which this test is not about
    const warm = await origins.start({});
    for (const token of TOKENS) await (await gateway.fetchVia(warm.url('/warm'), as(token))).arrayBuffer();
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('8 clients, 2 tokens, one host: nothing arrives in the cooldown, then 400 ms apart', async () => {
    const o = await origins.start(firstThrottled());
    const clients = Array.from({ length: 8 }, async (_, i) => {
      const res = await gateway.fetchVia(o.url(`/c${i}`), as(TOKENS[i % 2]));
      const body = await res.text();
      return { status: res.status, attempts: Number(res.headers.get('hostpace-attempts')), body };
    });
    const answers = await within(Promise.all(clients), 30_000, 'the clients were not answered within 30 s');
    assert.deepEqual(answers.map((a) => a.status), Array(8).fill(200), JSON.stringify(answers));
    const attempts = answers.map((a) => a.attempts);
    const arrived = o.log.map((e) => `${e.path}:${e.status}@${Math.round(e.t - o.log[0].t)}`).join(' ');
    assert.deepEqual(attempts.filter((n) => n !== 1), [2], `the throttled request was retried once: ${attempts}; ${arrived}`);
    assert.equal(o.log.length, 9, `8 requests and one retry: ${arrived}`);
    const { gaps } = assertHeld(o.log, { ratePerSec: RATE, tolMs: GATEWAY_TOL, what: 'one host, 8 clients' });
    console.log(`held: arrivals after the 429, ms after the one before: ${gaps.map(Math.round).join(', ')}`);
  });

  test('a departure held past its caller\'s bound: 503 departure_held with Retry-After, nothing sent', async () => {
    const o = await origins.start(firstThrottled());
    const bounded = { 'hostpace-max-wait-ms': '1000' };
    const ask = async (i) => {
      const res = await gateway.fetchVia(o.url(`/b${i}`), { ...as(TOKENS[i]), ...bounded });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
    };
    const first = ask(0);
    // the second is reserved (200 ms after the first) before the 429 comes back, within its 1 s bound
    await until(() => o.log.length > 0, { withinMs: 5000, message: 'the first request never arrived' });
    const [throttled, held] = await within(Promise.all([first, ask(1)]), 10_000);
    // the first's retry may not go within 1 s: its 429 is the answer (as before)
    assert.equal(throttled.status, 429, throttled.body);
    assert.equal(held.status, 503, held.body);
    assert.equal(JSON.parse(held.body).error.code, 'departure_held', held.body);
    assert.equal(held.retryAfter, String(RETRY_AFTER_SEC), 'Retry-After: the held departure\'s new instant');
    await sleep(2500); // past the held departure's new instant: still nothing sent
    assert.deepEqual(o.log.map((e) => `${e.path} ${e.status}`), ['/b0 429']);
  });
});
