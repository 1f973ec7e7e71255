// The host's object sends the gateway's requests itself, in the step that confirms their departure: a Worker that
// hears back from the object late (a busy isolate) cannot bring two requests closer at the target than the
// host's spacing. The Worker here is the build wrapped so that every answer of a host's object reaches it
// 0–300 ms late (tests/gateway/workers/late-object-answers.mjs), run by workerd under miniflare; the check reads
// the origin's own log.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit } from '../../pkg/node.js';
import { Origin, assertSpacing } from '../js/helpers.mjs';
import { GATEWAY_TOL, startWorkerd } from './gateway.mjs';

const RATE = 5;

test('answers of the host object reaching the Worker up to 300 ms late: the origin still sees the spacing', async () => {
  const gateway = await startWorkerd({
    script: 'tests/gateway/workers/late-object-answers.mjs',
    vars: {
      CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
      CRAWL_RATE_PER_SEC: String(RATE),
      CRAWL_BURST_CAPACITY: '1',
      CRAWL_ROBOTS_TTL_SEC: '0',
    },
  });
  const origin = await Origin.start({});
  try {
    const get = async (path) => {
      const res = await fetch(`${gateway.base}/v1/fetch?url=${encodeURIComponent(origin.url(path))}`, {
        headers: { authorization: `Bearer ${gateway.token}` },
      });
      assert.equal(res.status, 200, `${path}: ${await res.clone().text()}`);
      await res.arrayBuffer();
    };
    await get('/warm');
    const clients = Array.from({ length: 5 }, async (_, c) => {
      for (let i = 0; i < 5; i++) await get(`/c${c}/p${i}`);
    });
    await Promise.all(clients);
    const times = origin.arrivals();
    assert.equal(times.length, 26);
    assertSpacing(assert, times, 1000 / RATE, GATEWAY_TOL, 'one host, answers of its object late');
    assert.deepEqual(audit({ ratePerSec: RATE, burstCapacity: 1 }, times, [], GATEWAY_TOL), [], "the origin's log passes audit");
  } finally {
    await origin.close();
    await gateway.dispose();
  }
});
