// The package in workerd (the Cloudflare Workers runtime), through miniflare from the pinned wrangler install:
// a module worker imports `pkg/workerd.js` — the `workerd` export condition, with the .wasm imported as a compiled
// module the way wrangler bundles it — and answers with decisions (hosts grouped by site too, by the bundled
// Public Suffix List), an error message and a snapshot round trip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { COMPATIBILITY_DATE, workerModules } from '../gateway/gateway.mjs';

const root = new URL('../../', import.meta.url).pathname;

test('the workerd entry loads in workerd and decides', async () => {
  const mf = new Miniflare(convertV4MiniflareOptions({
    modules: workerModules('tests/js/workerd/worker.mjs', 'pkg'),
    modulesRoot: root,
    compatibilityDate: COMPATIBILITY_DATE,
  }));
  try {
    const res = await mf.dispatchFetch('http://localhost/');
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.first, 0);
    assert.equal(body.second, 500);
    assert.equal(body.layer, 'burst');
    assert.equal(body.host, 'example.com', 'spellings of one host share a key (platform URL in workerd)');
    assert.equal(body.bucket, 0);
    assert.match(body.configError, /burstCapacity/);
    assert.equal(body.restored, 1);
    assert.deepEqual(body.site, ['none', 'site'], 'two hosts of one site wait for each other');
    assert.equal(body.siteOf, '*.example.com');
    assert.ok(body.clock > 1.6e12, `the clock adapter reads epoch milliseconds in workerd: ${body.clock}`);
  } finally {
    await mf.dispose();
  }
});
