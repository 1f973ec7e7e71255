// The host's spacing at the target, to a few milliseconds: 60 requests from 10 concurrent clients through
// /v1/fetch to one host at 5/s, burst 1 (robots.txt first, through the same limiter), ten runs in a row, each on a
// fresh host (a fresh origin, so each run begins on a connection the runtime has to open). Judged from the
// origin's access log with a 5 ms tolerance over every span of arrivals. The origin runs in a process of its own
// (`RemoteOrigin`), so the ten clients' work in this process never delays its stamps.
//
// With CRAWL_JITTER, the same host's gaps are never below the spacing and spread over the stretch configured.
//
// What keeps the spacing there: the host's object confirms each departure and sends it in one step, the core keeps
// a margin of 1/64 of the spacing beyond it, and a request sent after a quiet (which may have to open a
// connection first, 10–27 ms on loopback) has the next departure spaced from when its answer came.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RemoteOrigin, assertSpacing, gaps, originPool, within } from '../js/helpers.mjs';
import { Gateway } from './gateway.mjs';

const RATE = 5;
const RUNS = 10;
const TOL_MS = 5;

describe('gateway: 10 clients, one host at 5/s: arrivals at least 200 ms apart, to 5 ms', () => {
  let gateway;
  const origins = originPool(RemoteOrigin);

  before(async () => {
    gateway = await Gateway.start({
      vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_RATE_PER_SEC: String(RATE), CRAWL_BURST_CAPACITY: '1' },
    });
    // the first calls start the Worker and the token's ledger, which this test is not about
    const warm = await origins.start({});
    await (await gateway.fetchVia(warm.url('/warm'))).arrayBuffer();
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test(`${RUNS} runs of 60 requests from 10 clients`, { timeout: 240_000 }, async () => {
    const measured = [];
    for (let run = 0; run < RUNS; run++) {
      const o = await origins.start({});
      const clients = Array.from({ length: 10 }, async (_, c) => {
        for (let i = 0; i < 6; i++) {
          const res = await gateway.fetchVia(o.url(`/c${c}/p${i}`));
          await res.arrayBuffer();
          assert.equal(res.status, 200);
        }
      });
      await within(Promise.all(clients), 40_000, `run ${run}: 60 requests at 5/s did not finish within 40 s`);
      await o.sync();
      const times = o.arrivals();
      assert.equal(times.length, 61, `run ${run}: 60 pages and robots.txt`);
      const smallest = assertSpacing(assert, times, 1000 / RATE, TOL_MS, `run ${run}`);
      measured.push(`${smallest.toFixed(1)} (${Math.max(...gaps(times)).toFixed(1)})`);
      await o.close();
    }
    console.log(`spacing: smallest (largest) gap between arrivals per run, ms: ${measured.join(', ')}`);
  });
});

describe('gateway: CRAWL_JITTER=0.5 at 5/s, burst 1: gaps never below 200 ms, stretched by up to half, spread', () => {
  let gateway;
  const origins = originPool(RemoteOrigin);

  before(async () => {
    gateway = await Gateway.start({
      vars: {
        CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
        CRAWL_RATE_PER_SEC: String(RATE),
        CRAWL_BURST_CAPACITY: '1',
        CRAWL_JITTER: '0.5',
      },
    });
    const warm = await origins.start({});
    await (await gateway.fetchVia(warm.url('/warm'))).arrayBuffer();
  });

  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('40 requests from 4 clients, judged from the origin\'s log', { timeout: 60_000 }, async () => {
    const o = await origins.start({});
    const clients = Array.from({ length: 4 }, async (_, c) => {
      for (let i = 0; i < 10; i++) {
        const res = await gateway.fetchVia(o.url(`/c${c}/p${i}`));
        await res.arrayBuffer();
        assert.equal(res.status, 200);
      }
    });
    await within(Promise.all(clients), 40_000, '40 requests at 5/s did not finish within 40 s');
    await o.sync();
    const times = o.arrivals();
    assert.equal(times.length, 41, '40 pages and robots.txt');
    assertSpacing(assert, times, 1000 / RATE, TOL_MS, 'jittered host');
    const g = gaps([...times].sort((a, b) => a - b));
    // a spacing of 200 ms stretched by 0 to 100 ms: 250 ms on average, each gap between 200 and 300 ms (and the
    // little a request takes to be sent and stamped)
    const mean = g.reduce((a, b) => a + b, 0) / g.length;
    assert.ok(mean > 225 && mean < 280, `mean gap ${mean.toFixed(1)} ms: ${g.map((x) => x.toFixed(0))}`);
    assert.ok(g.filter((x) => x < 230).length >= 3 && g.filter((x) => x > 270).length >= 3, `spread: ${g}`);
    assert.ok(g.every((x) => x < 300 + 40), `no gap beyond the largest stretch: ${g.map((x) => x.toFixed(0))}`);
    console.log(`jitter: gaps ms ${g.map((x) => x.toFixed(0)).join(', ')}`);
  });
});
