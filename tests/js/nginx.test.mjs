// The npm package against a real nginx `limit_req` server on 127.0.0.1 (tests/js/nginx.mjs), judged from nginx's
// own access log: does a crawler configured at the site's rate, or above it, get its pages without being turned
// away? Run: `node --test tests/js/nginx.test.mjs` (needs pkg/ from `npm run build:pkg` and Debian's nginx, which
// scripts/setup.sh installs). bench/nginx.mjs measures the full table.
//
// The site allows 2 requests a second per client address, no burst (`limit_req … rate=2r/s`, a rejection is a
// 429 with `Retry-After: 1`). Each scenario: a fresh nginx, a fresh Limiter (robots.txt ignored: only the pacing is
// judged), 8 callers pulling page URLs from one queue, each `await limiter.fetch(url, { timeoutMs: 60_000 })` and
// reading the body. A scenario is bounded: past its deadline no caller takes another URL and the calls abort.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter } from '../../pkg/node.js';
import { crawl, judge, startNginx } from './nginx.mjs';

const SITE_RATE = 2; // nginx: requests per second per client address, burst 0
const CALLERS = 8;

/** Crawl `pages` pages of a fresh nginx with a fresh Limiter of `config`; the access log's verdict and the callers'. */
async function scenario(name, { pages, config, deadlineMs }) {
  const site = await startNginx({ ratePerSec: SITE_RATE, pages });
  try {
    await site.warm();
    const limiter = new Limiter({ ...config, robots: 'ignore' });
    const urls = Array.from({ length: pages }, (_, i) => site.url(`/p/${i}.html`));
    const run = await crawl(limiter, urls, { callers: CALLERS, timeoutMs: 60_000, signal: AbortSignal.timeout(deadlineMs) });
    await site.sync();
    const log = site.log();
    const j = judge(log, pages);
    const failed = Object.entries(run.failed).map(([k, v]) => `${v} ${k}`).join(', ') || 'none';
    console.log(
      `${name}: ${j.rejected}/${j.requests} rejected (${(j.rejectedShare * 100).toFixed(1)} %), ` +
        `${j.pagesFetched}/${pages} pages, ${j.pagesPerSec.toFixed(2)} pages/s over ${j.seconds.toFixed(1)} s ` +
        `(${((j.pagesPerSec / SITE_RATE) * 100).toFixed(0)} % of the site's ${SITE_RATE}/s); callers: ${run.ok} ok, ` +
        `${run.gaveUp} gave up, failed: ${failed}`,
    );
    return { log, j, run };
  } finally {
    await site.stop();
  }
}

describe('a real nginx limit_req server (2 r/s, no burst), 8 callers', () => {
  test('configured at the site\'s rate (2/s, burst 1): no 429, every page once', { timeout: 60_000 }, async () => {
    const pages = 12;
    const { log, j } = await scenario('1x (2/s, burst 1)', {
      pages,
      config: { ratePerSec: 2, burstCapacity: 1 },
      deadlineMs: 30_000,
    });
    // each rejection with the time since the request nginx last accepted (nginx wants 500 ms at 2 r/s, no burst)
    const rejections = log
      .map((e, i) => ({ e, accepted: log.slice(0, i).findLast((x) => x.status === 200) }))
      .filter(({ e }) => e.status === 429)
      .map(({ e, accepted }) => `${e.path}, ${accepted ? `${e.atMs - accepted.atMs} ms after the last accepted` : 'first'}`);
    assert.deepEqual(rejections, [], 'nginx answered 429');
    for (let i = 0; i < pages; i++) {
      const lines = log.filter((e) => e.path === `/p/${i}.html`).map((e) => e.status);
      assert.deepEqual(lines, [200], `/p/${i}.html in the access log`);
    }
  });

  const at5x = 'configured at 5x the site\'s rate (10/s, burst 4): few 429s, every page, most of the allowed rate';
  test(at5x, { timeout: 70_000 }, async () => {
    const pages = 40;
    const { j } = await scenario('5x (10/s, burst 4)', {
      pages,
      config: { ratePerSec: 10, burstCapacity: 4 },
      deadlineMs: 50_000,
    });
    assert.ok(j.rejectedShare <= 0.1, `${j.rejected} of ${j.requests} requests rejected (429): more than 10 %`);
    assert.equal(j.pagesFetched, pages, 'pages answered 200');
    assert.ok(
      j.pagesPerSec >= 0.7 * SITE_RATE,
      `${j.pagesPerSec.toFixed(2)} pages/s: below 70 % of the site's ${SITE_RATE}/s`,
    );
  });
});
