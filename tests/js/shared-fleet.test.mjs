// A crawler fleet on its own machines, as in production: 4 Node processes (shared-crawler.mjs), each with a
// SharedLimiter on one real redis-server (Debian's, started here on 127.0.0.1 and stopped by PID), crawl one
// origin in a process of its own. Judged from the origin's access log only: it must pass `audit` as if one
// polite process had crawled.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { audit } from '../../pkg/node.js';
import { startRedis } from '../support/redis.mjs';
import { RemoteOrigin, TOL, maxInWindow, sleep } from './helpers.mjs';

const RATE = 5;
/** The policy every process keeps to, together: what the origin's log is audited against. */
const policy = { ratePerSec: RATE, burstCapacity: 1 };
const config = { ...policy, robots: 'ignore', fleetSize: 4 };

let redis;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

/** Start a crawler process (not yet crawling): resolves once it is connected, with a `go()` and its report. */
async function crawler(options) {
  const child = fork(new URL('./shared-crawler.mjs', import.meta.url), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages = [];
  const report = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      messages.push(m);
      if (m.done) resolve(m);
    });
    child.on('exit', (code, signal) => reject(new Error(`crawler exited (${code ?? signal}) before its report`)));
  });
  report.catch(() => {});
  await new Promise((resolve) => child.once('message', resolve)); // ready
  return { child, messages, report, go: () => child.send('go') };
}

let prefixes = 0;

/**
 * `n` processes crawl `urls` (dealt out in turn) of one fleet; `options(i)` adds to process i's options.
 * Resolves with their reports, once all are done (at most `boundMs`).
 */
async function crawl(urls, { n = 4, options = () => ({}), boundMs = 60_000, fleetConfig = config } = {}) {
  const prefix = `fleet${++prefixes}:`;
  const mine = (i) => urls.filter((_, k) => k % n === i);
  const fleet = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      crawler({ redisPort: redis.port, prefix, config: fleetConfig, urls: mine(i), ...options(i) }),
    ),
  );
  const started = performance.now();
  for (const c of fleet) c.go();
  const reports = await Promise.race([
    Promise.all(fleet.map((c) => c.report)),
    sleep(boundMs).then(() => Promise.reject(new Error(`the crawl took longer than ${boundMs} ms`))),
  ]);
  return { reports, tookMs: performance.now() - started };
}

/** Arrival times at `origin` (after a sync), in order. */
async function arrivals(origin, path) {
  await origin.sync();
  return origin.arrivals(path).sort((a, b) => a - b);
}

/** Requests per second over `times`, leaving out `pausedMs` (a cooldown the host asked for). */
function achievedRate(times, pausedMs = 0) {
  return ((times.length - 1) * 1000) / (times.at(-1) - times[0] - pausedMs);
}

const pages = (origin, n, path = '/page') => Array.from({ length: n }, (_, i) => origin.url(`${path}?i=${i}`));

test('4 processes, one host, 60 requests: the log passes audit as one polite crawler at ≥ 95 % of the rate', async () => {
  const origin = await RemoteOrigin.start();
  try {
    const { reports } = await crawl(pages(origin, 60));
    assert.deepEqual(reports.flatMap((r) => r.failures), []);
    const times = await arrivals(origin, '/page');
    assert.equal(times.length, 60);
    assert.deepEqual(audit(policy, times, [], TOL), [], 'no violation in the origin log');
    const rate = achievedRate(times);
    assert.ok(rate >= 0.95 * RATE, `${rate.toFixed(2)}/s of ${RATE}/s`);
  } finally {
    await origin.close();
  }
});

test('a 429 with Retry-After in the middle: no process sends inside the cooldown, and the fleet keeps pace', async () => {
  const replies = [...Array(29).fill({ status: 200 }), { status: 429, headers: { 'retry-after': '2' } }, { status: 200 }];
  // the yardstick: one process with a Limiter of its own and as many workers as the fleet's (4 × 3), on the same
  // script: after a 429 the core slows the host and lets it climb back, and departures already reserved at the
  // slower pace keep it, so the rate to keep is what one polite process with as many requests in flight keeps
  const alone = await RemoteOrigin.start({ '/page': replies });
  let aloneRate;
  try {
    await crawl(pages(alone, 60), { n: 1, options: () => ({ plain: true, workers: 12 }) });
    aloneRate = achievedRate(await arrivals(alone, '/page'));
  } finally {
    await alone.close();
  }
  const origin = await RemoteOrigin.start({ '/page': replies });
  try {
    const { reports } = await crawl(pages(origin, 60));
    assert.deepEqual(reports.flatMap((r) => r.failures), []);
    await origin.sync();
    const pushedBack = origin.log.find((e) => e.status === 429);
    assert.ok(pushedBack, 'the origin answered one 429');
    const times = await arrivals(origin, '/page');
    assert.equal(times.length, 61, '60 pages and the one retried');
    const cooldown = { startMs: pushedBack.t, endMs: pushedBack.t + 2000 };
    const inside = times.filter((t) => t > cooldown.startMs && t < cooldown.endMs - TOL);
    assert.deepEqual(inside, [], 'no arrival inside the cooldown, from any process');
    assert.deepEqual(audit(policy, times, [cooldown], TOL), []);
    const rate = achievedRate(times);
    assert.ok(rate >= 0.95 * aloneRate, `${rate.toFixed(2)}/s, one process alone ${aloneRate.toFixed(2)}/s`);
  } finally {
    await origin.close();
  }
});

test("processes whose clocks are 5 s off pace exactly as the others: the store's clock is the fleet's", async () => {
  const origin = await RemoteOrigin.start();
  try {
    const skews = [0, 5000, -5000, 0];
    const { reports } = await crawl(pages(origin, 60), { options: (i) => ({ skewMs: skews[i] }) });
    assert.deepEqual(reports.flatMap((r) => r.failures), []);
    const times = await arrivals(origin, '/page');
    assert.equal(times.length, 60);
    assert.deepEqual(audit(policy, times, [], TOL), []);
    assert.ok(achievedRate(times) >= 0.95 * RATE);
  } finally {
    await origin.close();
  }
});

test('Redis stopped mid-crawl and started again: nothing hangs, the rate holds, the crawl completes', async () => {
  const origin = await RemoteOrigin.start();
  try {
    const crawling = crawl(pages(origin, 60));
    await sleep(3000);
    await redis.stop();
    await sleep(3000);
    await redis.restart();
    const { reports } = await crawling;
    assert.deepEqual(reports.flatMap((r) => r.failures), [], 'every request went out');
    // each page waited its turn, and no store call held it past its timeout for long
    for (const r of reports) assert.ok(r.longestMs < 15_000, `the longest fetch took ${r.longestMs} ms`);
    const times = await arrivals(origin, '/page');
    assert.equal(times.length, 60);
    // while the store was out of reach each process paced itself at 1/4 of the rate, uncoordinated: at most
    // the rate, give or take one request per process, in any window
    for (const windowMs of [2000, 4000, 8000]) {
      const most = maxInWindow(times, windowMs);
      assert.ok(most <= (RATE * windowMs) / 1000 + 4, `${most} requests in ${windowMs} ms`);
    }
  } finally {
    await origin.close();
  }
});

test("a process killed while holding a permit gives it back at its lease's end", async () => {
  const origin = await RemoteOrigin.start();
  const leased = { ...config, robots: 'ignore', ratePerSec: 20, maxConcurrency: 1, leaseSec: 3 };
  try {
    const prefix = `fleet${++prefixes}:`;
    const holder = await crawler({ redisPort: redis.port, prefix, config: leased, urls: [origin.url('/hold')], hangPath: '/hold' });
    holder.go();
    await new Promise((resolve) => holder.child.on('message', (m) => m.holding && resolve()));
    const killed = once(holder.child, 'exit');
    holder.child.kill('SIGKILL');
    await killed;
    const others = await Promise.all(
      [0, 1, 2].map((i) =>
        crawler({ redisPort: redis.port, prefix, config: leased, urls: [origin.url(`/after?i=${i}`)], workers: 1 }),
      ),
    );
    for (const c of others) c.go();
    const reports = await Promise.all(others.map((c) => c.report));
    assert.deepEqual(reports.flatMap((r) => r.failures), []);
    const held = (await arrivals(origin, '/hold'))[0];
    const next = await arrivals(origin, '/after');
    assert.equal(next.length, 3);
    const lease = 3000;
    assert.ok(next[0] >= held + lease - 200 - TOL, `the permit came back ${next[0] - held} ms after it was taken`);
    assert.ok(next[0] <= held + lease + 1500, `…and soon after its lease ended: ${next[0] - held} ms`);
  } finally {
    await origin.close();
  }
});

test('robots.txt: one fetch for the whole fleet, and a disallowed URL never sent', async () => {
  const origin = await RemoteOrigin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' } });
  try {
    const urls = [...pages(origin, 20), ...pages(origin, 8, '/private/page')];
    const { reports } = await crawl(urls, { fleetConfig: { ...config, robots: 'obey' } });
    const failures = reports.flatMap((r) => r.failures);
    assert.equal(failures.length, 8);
    assert.ok(failures.every((f) => f.includes('RobotsDisallowed')), failures.join('\n'));
    await origin.sync();
    assert.equal(origin.arrivals('/robots.txt').length, 1, 'one /robots.txt for the fleet');
    assert.equal(origin.log.filter((e) => e.path.startsWith('/private')).length, 0);
    const times = [...(await arrivals(origin, '/robots.txt')), ...(await arrivals(origin, '/page'))].sort((a, b) => a - b);
    assert.deepEqual(audit(policy, times, [], TOL), []);
  } finally {
    await origin.close();
  }
});
