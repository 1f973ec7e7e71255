// A target that gives no answer: `/v1/fetch` answers the gateway's own 502 `upstream_failed` (nothing listens)
// or 504 `upstream_timeout` (no answer within CRAWL_FETCH_TIMEOUT_SEC), never a 500, and the host goes on
// being served. The request is sent by the host's object in the call that reserved its departure; what came of it
// crosses back as the object's reply alone, with no response beside it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Origin, freePort } from '../js/helpers.mjs';
import { startWorkerd } from './gateway.mjs';

test('a target that refuses the connection is 502 upstream_failed, one that never answers 504 upstream_timeout', async () => {
  const gateway = await startWorkerd({
    vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_ROBOTS_TTL_SEC: '0', CRAWL_FETCH_TIMEOUT_SEC: '1' },
  });
  // accepts connections, reads the request, never answers
  const silent = http.createServer(() => {});
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const origin = await Origin.start({});
  const get = async (url) => {
    const res = await fetch(`${gateway.base}/v1/fetch?url=${encodeURIComponent(url)}`, {
      headers: { authorization: `Bearer ${gateway.token}` },
    });
    return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.text() };
  };
  try {
    const closed = await freePort(); // nothing listens there any more
    for (let i = 0; i < 2; i++) {
      const refused = await get(`http://127.0.0.1:${closed}/x${i}`);
      assert.deepEqual([refused.status, refused.code], [502, 'upstream_failed'], refused.body);
    }
    const timedOut = await get(`http://127.0.0.1:${silent.address().port}/slow`);
    assert.deepEqual([timedOut.status, timedOut.code], [504, 'upstream_timeout'], timedOut.body);
    const served = await get(origin.url('/fine'));
    assert.equal(served.status, 200, served.body);
    assert.deepEqual(origin.log.map((e) => e.path), ['/fine']);
  } finally {
    silent.closeAllConnections();
    silent.close();
    await origin.close();
    await gateway.dispose();
  }
});
