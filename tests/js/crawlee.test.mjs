// `hostpace/crawlee` with real Crawlee 3 crawlers (@crawlee/http, @crawlee/basic) against origins on 127.0.0.1 that
// log their own arrivals; every check reads those logs (the target's view) or what Crawlee reported.
//
// Each crawler gets its own `Configuration` with `persistStorage: false`: its request queue and statistics live in
// memory only, so nothing is written under the repository. `minConcurrency` is set to `maxConcurrency` so that
// Crawlee runs that many tasks from the start (its pool otherwise starts with one and grows every 10 s). Crawlee's
// own retries and session pool are left as they are: the integration has to work with them.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BasicCrawler, Configuration, log } from '@crawlee/basic';
import { HttpCrawler } from '@crawlee/http';
import { Limiter, SharedLimiter } from '../../pkg/node.js';
import { memoryStore } from './memory-store.mjs';
import { sendPaced, withHostpace } from '../../pkg/crawlee.js';
import { RemoteOrigin, TOL, assertSpacing, clockMs, originPool, until } from './helpers.mjs';

// Crawlee logs each retry and failure as a warning or error: the checks below read them from its reports instead
log.setLevel(log.LEVELS.OFF);

// Each origin runs in a process of its own: Crawlee blocks this process's event loop now and then (its pool, its
// periodic system snapshots), and an origin sharing that loop would stamp an arrival late by as much.
const origins = originPool(RemoteOrigin);
after(() => origins.closeAll());

/** robots.txt routes: none (404), or a file. */
const NO_ROBOTS = { '/robots.txt': { status: 404, headers: { 'Content-Type': 'text/plain' }, body: '' } };
const robots = (text) => ({ '/robots.txt': { headers: { 'Content-Type': 'text/plain' }, body: text } });

/** An origin no test measures: each crawler's first page (see `crawl`). */
let starter;

/**
 * Run `Crawler` (HttpCrawler by default) paced by `limiter` over `urls`. Returns the pages handled (url, when
 * the handler ran, after how many retries), the requests that failed (url, error, retries) and Crawlee's final
 * statistics.
 *
 * A crawler's start and its first task block the event loop for some 20 ms (Crawlee sets up its pool, queue and
 * sessions), which would delay the first arrival at an origin and shorten the gap after it in the origin's log.
 * So the crawler is started (`keepAlive`) on a page of `starter`, and `urls` are added once that page is handled:
 * the measured origins see a crawler already running. It is stopped once every URL has been handled or failed.
 */
async function crawl({ Crawler = HttpCrawler, limiter, urls, pace, requestHandler, ...options }) {
  const handled = [];
  const failed = [];
  let started = false;
  const maxConcurrency = options.maxConcurrency ?? 4;
  const crawler = new Crawler(
    {
      maxConcurrency,
      minConcurrency: maxConcurrency,
      keepAlive: true,
      requestHandler: async (context) => {
        if (context.request.url.startsWith(starter.url())) {
          started = true;
          return;
        }
        if (requestHandler) await requestHandler(context);
        handled.push({ url: context.request.url, t: clockMs(), retryCount: context.request.retryCount });
      },
      failedRequestHandler: async ({ request }, error) => {
        failed.push({ url: request.url, error, retryCount: request.retryCount });
      },
      ...options,
    },
    new Configuration({ persistStorage: false }),
  );
  withHostpace(crawler, limiter, pace);
  const running = crawler.run([starter.url(`/start-${Math.random()}`)]);
  await until(() => started);
  const t0 = clockMs();
  await crawler.addRequests(urls);
  await until(() => handled.length + failed.length === urls.length);
  await origins.syncAll();
  const ms = clockMs() - t0;
  crawler.stop();
  crawler.autoscaledPool?.notify(); // (the pool would notice the stop at its next tick, in up to 0.5 s)
  const stats = await running;
  return { handled, failed, stats, ms };
}

/** The URLs of `paths` on `origin`. */
const urlsOf = (origin, paths) => paths.map((p) => origin.url(p));

before(async () => {
  // Load Crawlee's HTTP client (got-scraping, its header generator) and the platform's fetch (robots.txt) once:
  // their first use blocks the event loop, which would delay an arrival.
  starter = await origins.start(NO_ROBOTS);
  await fetch(starter.url('/')).then((r) => r.arrayBuffer());
  const warm = await origins.start(NO_ROBOTS);
  await crawl({ limiter: new Limiter({ ratePerSec: 100 }), urls: [warm.url('/')] });
});

describe('HttpCrawler paced by withHostpace', () => {
  test('each host is paced on its own: spacing per host ≥ the interval, the hosts side by side', { timeout: 20_000 }, async () => {
    const INTERVAL = 250;
    const [a, b] = [await origins.start(NO_ROBOTS), await origins.start(NO_ROBOTS)];
    const paths = ['/1', '/2', '/3', '/4', '/5', '/6'];
    const limiter = new Limiter({ ratePerSec: 1000 / INTERVAL, burstCapacity: 1 });
    const { handled, failed, ms } = await crawl({
      limiter,
      urls: [...urlsOf(a, paths), ...urlsOf(b, paths)],
      maxConcurrency: 4,
    });
    assert.deepEqual(failed, []);
    assert.equal(handled.length, 12);
    for (const origin of [a, b]) {
      const log = origin.log.map((e) => e.path);
      assert.equal(log[0], '/robots.txt', 'robots.txt first');
      assert.deepEqual([...log.slice(1)].sort(), paths, 'every page once');
      assertSpacing(assert, origin.arrivals(), INTERVAL, TOL, origin.host);
    }
    // side by side: each host's crawl overlaps the other's (one after the other would take twice as long)
    assert.ok(b.arrivals()[0] < a.arrivals().at(-1) && a.arrivals()[0] < b.arrivals().at(-1), 'hosts interleave');
    assert.ok(ms < 2 * 7 * INTERVAL, `took ${ms.toFixed(0)} ms: less than the two hosts one after the other`);
  });

  test('two crawlers paced by SharedLimiters on one store pace a host together, unchanged', { timeout: 20_000 }, async () => {
    const INTERVAL = 250;
    const site = await origins.start(NO_ROBOTS);
    const store = memoryStore();
    const shared = () => new SharedLimiter({ ratePerSec: 1000 / INTERVAL, burstCapacity: 1, store, fleetSize: 2 });
    const paths = ['/1', '/2', '/3', '/4', '/5', '/6'];
    const runs = await Promise.all([
      crawl({ limiter: shared(), urls: urlsOf(site, paths.slice(0, 3)), maxConcurrency: 2 }),
      crawl({ limiter: shared(), urls: urlsOf(site, paths.slice(3)), maxConcurrency: 2 }),
    ]);
    assert.deepEqual(runs.flatMap((r) => r.failed), []);
    const log = site.log.map((e) => e.path);
    assert.deepEqual(log.filter((p) => p === '/robots.txt'), ['/robots.txt'], 'robots.txt once for both');
    assert.deepEqual(log.filter((p) => p !== '/robots.txt').sort(), paths);
    assertSpacing(assert, site.arrivals(), INTERVAL, TOL, site.host);
  });

  test('429 + Retry-After: 2 → the host is not asked again for 2 s, then the URL is fetched', { timeout: 20_000 }, async () => {
    const hot = await origins.start({
      ...NO_ROBOTS,
      '/p': [{ status: 429, headers: { 'Retry-After': '2' }, body: 'slow down' }, { status: 200, body: 'ok' }],
    });
    const limiter = new Limiter({ ratePerSec: 10, burstCapacity: 1 });
    const { handled, failed } = await crawl({ limiter, urls: urlsOf(hot, ['/p', '/q', '/r']) });
    assert.deepEqual(failed, []);
    assert.deepEqual(handled.map((h) => h.url).sort(), urlsOf(hot, ['/p', '/q', '/r']));
    const throttledAt = hot.log.find((e) => e.status === 429).t;
    const after429 = hot.log.filter((e) => e.t > throttledAt);
    assert.ok(after429.length >= 1, 'asked again');
    for (const e of after429) {
      assert.ok(e.t - throttledAt >= 2000 - TOL, `${e.path} ${(e.t - throttledAt).toFixed(0)} ms after the 429`);
    }
    assert.deepEqual(hot.arrivals('/p').length, 2, '/p once more after the cooldown, and then fetched');
    const retries = Object.fromEntries(handled.map((h) => [new URL(h.url).pathname, h.retryCount]));
    assert.deepEqual(retries, { '/p': 1, '/q': 0, '/r': 0 }, 'Crawlee retried /p once');
  });

  test('8 requests queued when the host answers 429 + Retry-After: 2: none arrives inside the cooldown', { timeout: 20_000 }, async () => {
    // the first request of all is answered 429 after 100 ms, so the others' departures are reserved before it
    // comes back: the limiter holds them behind the cooldown (all to one path, told apart by their queries)
    const hot = await origins.start({
      ...NO_ROBOTS,
      '/p': [{ status: 429, headers: { 'Retry-After': '2' }, body: 'slow down', delayMs: 100 }, { status: 200, body: 'ok' }],
    });
    const limiter = new Limiter({ ratePerSec: 5, burstCapacity: 1 });
    const urls = Array.from({ length: 8 }, (_, i) => hot.url(`/p?i=${i}`));
    const { handled, failed } = await crawl({ limiter, urls, maxConcurrency: 8 });
    assert.deepEqual(failed, []);
    assert.deepEqual(handled.map((h) => h.url).sort(), [...urls].sort());
    const pages = hot.log.filter((e) => e.path === '/p');
    assert.deepEqual(pages.map((e) => e.status), [429, ...Array(8).fill(200)], 'the 429, then each page once');
    const throttledAt = pages[0].t;
    const inside = pages.slice(1).filter((e) => e.t < throttledAt + 2000 - TOL);
    assert.deepEqual(inside.map((e) => `${e.url} ${(e.t - throttledAt).toFixed(0)} ms after the 429`), []);
    // after it, the host's slower pace: one incident halves 5/s (400 ms apart), each success gives 1/64 back
    const after = pages.slice(1).map((e) => e.t);
    after.slice(1).forEach((t, i) => {
      const spacing = 1000 / (2.5 + (i * 5) / 64);
      assert.ok(t - after[i] >= spacing - TOL, `arrivals ${i + 1} and ${i + 2} after the cooldown ${(t - after[i]).toFixed(1)} ms apart`);
    });
  });

  // A host in a 3 s cooldown with its URLs first in the queue, and a second host, with 2 concurrency slots.
  async function throttledAndFree(pace) {
    const slow = await origins.start({
      ...NO_ROBOTS,
      '/s1': [{ status: 429, headers: { 'Retry-After': '3' } }, { status: 200 }],
    });
    const free = await origins.start(NO_ROBOTS);
    const limiter = new Limiter({ ratePerSec: 5, burstCapacity: 1 });
    const result = await crawl({
      limiter,
      pace,
      maxConcurrency: 2,
      // /s1 first: its 429 starts the cooldown; then the other URLs of the throttled host, then the free host's
      urls: [...urlsOf(slow, ['/s1', '/s2', '/s3', '/s4']), ...urlsOf(free, ['/f1', '/f2', '/f3', '/f4', '/f5'])],
    });
    const throttledAt = slow.log.find((e) => e.status === 429).t;
    const slowAgainAt = slow.log.find((e) => e.t > throttledAt)?.t;
    const freeDoneAt = Math.max(...free.arrivals());
    return { ...result, slow, free, throttledAt, slowAgainAt, freeDoneAt };
  }

  test('a throttled host does not stall the other one (2 concurrency slots, 3 s cooldown)', { timeout: 20_000 }, async () => {
    const { handled, failed, slow, free, throttledAt, slowAgainAt, freeDoneAt } = await throttledAndFree(undefined);
    assert.deepEqual(failed, []);
    assert.equal(handled.length, 9, 'every page of both hosts');
    assert.ok(slowAgainAt - throttledAt >= 3000 - TOL, 'the throttled host is left alone for its 3 s');
    assert.ok(
      freeDoneAt < slowAgainAt,
      `the free host's pages all arrived (${(freeDoneAt - throttledAt).toFixed(0)} ms after the 429) before the ` +
        `throttled host was asked again (${(slowAgainAt - throttledAt).toFixed(0)} ms)`,
    );
    assert.ok(freeDoneAt - throttledAt < 2000, 'the free host went on at its own pace meanwhile');
    for (const origin of [slow, free]) assertSpacing(assert, origin.arrivals(), 200, TOL, origin.host);
  });

  test('… while with every wait held inside Crawlee tasks (holdMs: Infinity) the same crawl stalls', { timeout: 20_000 }, async () => {
    // the contrast that shows what setting requests aside buys: both slots wait for the throttled host
    const { handled, slowAgainAt, freeDoneAt, throttledAt } = await throttledAndFree({
      holdMs: Infinity,
      perHost: 4,
    });
    assert.equal(handled.length, 9);
    assert.ok(
      freeDoneAt > slowAgainAt && freeDoneAt - throttledAt >= 3000 - TOL,
      'the free host waited for the end of the other host\'s cooldown',
    );
  });

  test('robots.txt Disallow: never sent, reported failed without retries', { timeout: 20_000 }, async () => {
    const site = await origins.start(robots('User-agent: *\nDisallow: /private\n'));
    const limiter = new Limiter({ ratePerSec: 20, burstCapacity: 1 });
    const { handled, failed } = await crawl({ limiter, urls: urlsOf(site, ['/', '/private', '/private/x', '/open']) });
    assert.deepEqual(handled.map((h) => h.url).sort(), urlsOf(site, ['/', '/open']));
    assert.deepEqual(failed.map((f) => f.url).sort(), urlsOf(site, ['/private', '/private/x']));
    for (const f of failed) {
      assert.equal(f.error.name, 'RobotsDisallowed');
      assert.match(f.error.rule, /Disallow: \/private/);
      assert.equal(f.retryCount, 0, 'not retried');
    }
    assert.deepEqual(site.log.map((e) => e.path).sort(), ['/', '/open', '/robots.txt'], 'no /private reached the origin');
    assert.equal(site.log[0].path, '/robots.txt', 'robots.txt first');
  });

  test('a navigation that fails (connection refused) gives its concurrency permit back', { timeout: 20_000 }, async () => {
    // the post-navigation hook never runs: the crawler's cleanup reports the failure, so a host limited to one
    // request in flight is not blocked until the permit's lease ends
    const gone = await origins.start(NO_ROBOTS);
    const url = gone.url('/x');
    const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, maxConcurrency: 1, leaseSec: 600 });
    limiter.robotsStatus(gone.host, 404); // robots.txt known, so that closing the origin is all that is left
    await gone.close();
    // (Crawlee counts a refused connection as a proxy error: retried up to maxSessionRotations times)
    const { failed } = await crawl({ limiter, urls: [url], maxRequestRetries: 1, maxSessionRotations: 1 });
    assert.equal(failed.length, 1);
    assert.equal(failed[0].retryCount, 1, 'Crawlee retried once: the retry got the permit back');
    assert.equal(limiter.stats(gone.host).inFlight, 0, 'no permit left held');
  });
});

describe('BasicCrawler with sendPaced', () => {
  test('the requestHandler sends through sendPaced: paced per host, Retry-After obeyed, robots.txt refusals fail once', { timeout: 20_000 }, async () => {
    const INTERVAL = 200;
    const a = await origins.start({
      ...robots('User-agent: *\nDisallow: /no\n'),
      '/2': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }],
    });
    const b = await origins.start(NO_ROBOTS);
    const limiter = new Limiter({ ratePerSec: 1000 / INTERVAL, burstCapacity: 1 });
    const bodies = new Map();
    const { handled, failed } = await crawl({
      Crawler: BasicCrawler,
      limiter,
      maxConcurrency: 3,
      urls: [...urlsOf(a, ['/1', '/2', '/3', '/no']), ...urlsOf(b, ['/1', '/2', '/3'])],
      requestHandler: async (context) => {
        const response = await sendPaced(context, () => fetch(context.request.url));
        bodies.set(context.request.url, await response.text());
      },
    });
    assert.deepEqual(failed.map((f) => [f.url, f.error.name, f.retryCount]), [[a.url('/no'), 'RobotsDisallowed', 0]]);
    assert.equal(handled.length, 6);
    assert.equal(bodies.get(b.url('/3')), 'page /3');
    assert.ok(!a.log.some((e) => e.path === '/no'), '/no never sent');
    for (const origin of [a, b]) assertSpacing(assert, origin.arrivals(), INTERVAL, TOL, origin.host);
    const throttledAt = a.log.find((e) => e.status === 429).t;
    for (const e of a.log.filter((x) => x.t > throttledAt)) {
      assert.ok(e.t - throttledAt >= 1000 - TOL, `${e.path} ${(e.t - throttledAt).toFixed(0)} ms after the 429`);
    }
    const retried = handled.filter((h) => h.retryCount > 0).map((h) => [h.url, h.retryCount]);
    assert.deepEqual(retried, [[a.url('/2'), 1]], 'Crawlee retried /2 once');
  });

  test('withHostpace refuses what it cannot pace', () => {
    const limiter = new Limiter();
    assert.throws(() => withHostpace({}, limiter), TypeError);
    const crawler = new BasicCrawler({ requestHandler: async () => {} }, new Configuration({ persistStorage: false }));
    assert.throws(() => withHostpace(crawler, {}), TypeError);
    assert.throws(() => withHostpace(crawler, limiter, { holdMs: -1 }), TypeError);
    withHostpace(crawler, limiter);
    assert.throws(() => withHostpace(crawler, limiter), /already paced/);
  });
});
