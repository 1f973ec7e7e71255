// Restarting the gateway mid-crawl with its Durable Object state on disk: the restarted host object owes every
// departure reserved before the restart, so nothing bursts after it (judged from the origin's access log); and
// what a departure that went changed is on disk a second after its answer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit } from '../../pkg/node.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { Origin, assertSpacing, clockMs, until } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway, tempDir } from './gateway.mjs';

const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_ROBOTS_TTL_SEC: '0',
  CRAWL_MIN_INTERVAL_SEC: '1',
  CRAWL_RATE_PER_SEC: '100',
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_MAX_RESERVATIONS_PER_TOKEN: '12', // the crawl below reserves 12 departures at once
};

test('a gateway restarted mid-crawl with persisted state resumes without a burst', async () => {
  const persistTo = tempDir();
  const origin = await Origin.start({});
  let gateway = await Gateway.start({ vars: VARS, persistTo });
  try {
    const N = 12; // 12 departures reserved at once: one per second, the last 11 s after the first
    const cut = Array.from({ length: N }, (_, i) =>
      gateway
        .fetchVia(origin.url(`/before${i}`))
        .then((r) => r.arrayBuffer())
        .catch(() => 'cut by the restart'),
    );
    await until(() => origin.log.length >= 3, { withinMs: 10_000, message: 'the crawl never started' });
    const first = origin.log[0].t;
    await gateway.stop(); // mid-crawl: the requests still waiting die with it, their reservations do not
    await Promise.all(cut);
    const beforeRestart = origin.log.length;
    assert.ok(beforeRestart < N, 'the restart happened mid-crawl');


    gateway = await Gateway.start({ vars: VARS, persistTo });
    const after = await Promise.all([0, 1, 2].map((i) => gateway.fetchVia(origin.url(`/after${i}`))));
    for (const r of after) assert.equal(r.status, 200);
    const times = origin.arrivals();
    const firstAfter = Math.min(...origin.log.filter((e) => e.path.startsWith('/after')).map((e) => e.t));
    // The N slots reserved before the restart end N s after the first slot; the restarted object still owes
    // them, so the first request after the restart leaves no earlier. (The first arrival is itself a little late:
    // the gateway's first connection. Without persisted state this request would arrive right after the
    // restart, about N/2 s early, so a 200 ms allowance keeps the check sharp.)
    assert.ok(
      firstAfter >= first + N * 1000 - 200,
      `first request after the restart arrived ${(firstAfter - first).toFixed(0)} ms after the first one; ` +
        `the ${N} slots reserved before the restart end ${N * 1000} ms after it`,
    );
    // A freshly started workerd's first upstream connection takes a few tens of milliseconds longer: the first
    // arrival after the restart is that much late, and the next one, on time, looks that much closer.
    assertSpacing(assert, times, 1000, GATEWAY_TOL, 'across the restart');
    assert.deepEqual(audit({ ratePerSec: 100, burstCapacity: 1, minIntervalSec: 1 }, times, [], GATEWAY_TOL), []);
    const report = await (await gateway.request(`/v1/hosts/${origin.host}`)).json();
    assert.equal(report.stats.decisions, N + 3, 'the counters survived the restart too');
  } finally {
    await gateway.stop();
    await origin.close();
  }
});

test('a departure that went is written as gone a second after its answer, so a restart keeps the token free', async () => {
  // One reservation per token: after a restart that forgot the first request went, it would still count against
  // the token until RESERVATION_GRACE (5 s) past its instant, and hold the next request that long. A request that
  // is not held takes some 50 ms, so the check means something while the restart leaves half a second of that
  // grace or more: a slower restart (a busy machine) makes the try inconclusive, and the scenario runs again from
  // the start, three times at most.
  const vars = { ...VARS, CRAWL_MIN_INTERVAL_SEC: '0', CRAWL_MAX_RESERVATIONS_PER_TOKEN: '1' };
  const tries = [];
  for (let i = 0; i < 3 && !tries.some((t) => t.conclusive); i++) tries.push(await restartAfterOneRequest(vars));
  const done = tries.find((t) => t.conclusive);
  assert.ok(
    done,
    `inconclusive: each restart took until ${tries.map((t) => (5000 - t.left).toFixed(0)).join(', ')} ms after ` +
      'the first request (a check needs 500 ms of the 5 s left)',
  );
  assert.ok(
    done.took < done.left - 100,
    `the request after the restart took ${done.took.toFixed(0)} ms (a forgotten departure holds it ` +
      `${done.left.toFixed(0)} ms): held by the one that went`,
  );
  assert.deepEqual(done.paths, ['/first', '/next']);
});

/**
 * One request through a fresh gateway, a restart past the object's write after the answer (1 s), and the next
 * request: how long that one took, how long a forgotten departure would have held it (`left`), and the paths the
 * origin received. Not `conclusive` (and no second request) when the restart leaves under 500 ms of that hold.
 */
async function restartAfterOneRequest(vars) {
  const persistTo = tempDir();
  const origin = await Origin.start({});
  let gateway = await Gateway.start({ vars, persistTo });
  try {
    const first = await gateway.fetchVia(origin.url('/first'));
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    await sleep(1500); // past the object's write after the answer (1 s)
    await gateway.stop();
    gateway = await Gateway.start({ vars, persistTo });
    const asked = clockMs();
    // a forgotten departure would still count until 5 s past its instant: `left` ms from now
    const left = origin.log[0].t + 5000 - asked;
    if (left <= 500) return { conclusive: false, left };
    const next = await gateway.fetchVia(origin.url('/next'));
    assert.equal(next.status, 200);
    await next.arrayBuffer();
    return { conclusive: true, left, took: clockMs() - asked, paths: origin.log.map((e) => e.path) };
  } finally {
    await gateway.stop();
    await origin.close();
  }
}
