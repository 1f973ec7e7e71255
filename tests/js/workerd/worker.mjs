// A module worker that imports the package through its `workerd` entry (the .wasm as a compiled module), as a
// Worker bundled by wrangler would, and answers with a few decisions.
import { Limiter, TokenBucket, nowMs } from '../../../pkg/workerd.js';

export default {
  async fetch() {
    const limiter = new Limiter({ ratePerSec: 2, burstCapacity: 1 });
    const first = limiter.acquire('https://Example.com./a', 0);
    const second = limiter.acquire('https://example.com:443/b', 0);
    let configError = '';
    try {
      new Limiter({ burstCapacity: 0 });
    } catch (e) {
      configError = e.message;
    }
    // hosts grouped by site, by the Public Suffix List the package bundles (psl.js, a module of its own here)
    const bySite = new Limiter({ ratePerSec: 1, burstCapacity: 1, groupBy: 'site' });
    const site = ['www', 'img'].map((h) => bySite.acquire(`https://${h}.example.com/`, 0).layer);
    const body = {
      site,
      siteOf: bySite.stats('img.example.com', 0).site,
      first: first.waitMs,
      second: second.waitMs,
      layer: second.layer,
      host: second.host,
      bucket: new TokenBucket(1, 5).acquire(0),
      clock: nowMs(),
      configError,
      restored: Limiter.restore(limiter.snapshot()).size,
    };
    return Response.json(body);
  },
};
