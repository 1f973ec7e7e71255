// Operators' rules in the package: a host's or a site's own pace (`setPolicy`) and blocks (`block`, `unblock`),
// set while a crawl runs. Decisions on an injected clock are exact; a block is judged from a real origin's log.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter } from '../../pkg/node.js';
import { Origin, sleep } from './helpers.mjs';

const T = 1_000_000;

/** The departures (ms from T) of `n` requests to `url` reserved at T. */
const departures = (limiter, url, n = 3) =>
  Array.from({ length: n }, () => limiter.acquire(url, T).departsMs - T);

const fresh = () => new Limiter({ ratePerSec: 10, burstCapacity: 1, robots: 'ignore' });

describe('setPolicy', () => {
  test('slows or speeds one host, or a site and every host under it; the most precise rule wins', () => {
    const limiter = fresh();
    limiter.setPolicy('slow.example', { ratePerSec: 2 });
    limiter.setPolicy('*.example.com', { ratePerSec: 1 });
    limiter.setPolicy('img.example.com', { minIntervalSec: 0.25, ratePerSec: 100 });
    assert.deepEqual(departures(limiter, 'https://slow.example/a'), [0, 500, 1000]);
    assert.deepEqual(departures(limiter, 'https://example.com/'), [0, 1000, 2000]);
    assert.deepEqual(departures(limiter, 'https://www.example.com/'), [0, 1000, 2000]);
    assert.deepEqual(departures(limiter, 'https://img.example.com/'), [0, 250, 500]);
    assert.deepEqual(departures(limiter, 'https://other.example/'), [0, 100, 200], 'the config');
    assert.deepEqual(limiter.rules(), [
      { pattern: 'img.example.com', policy: { ratePerSec: 100, minIntervalSec: 0.25 } },
      { pattern: 'slow.example', policy: { ratePerSec: 2 } },
      { pattern: '*.example.com', policy: { ratePerSec: 1 } },
    ]);
  });

  test('applies at once to a host already crawled, keeping what it owes; null gives it the config again', () => {
    const limiter = fresh();
    assert.deepEqual(departures(limiter, 'https://a.example/', 2), [0, 100]);
    limiter.setPolicy('a.example', { ratePerSec: 1 });
    assert.deepEqual(departures(limiter, 'https://a.example/', 2), [200, 1200]);
    limiter.setPolicy('a.example', null);
    assert.deepEqual(departures(limiter, 'https://a.example/', 2), [2200, 2300]);
    assert.deepEqual(limiter.rules(), []);
  });

  test('never faster than the host\'s robots.txt Crawl-delay', () => {
    const limiter = fresh();
    limiter.setRobots('https://delayed.example/', 'User-agent: *\nCrawl-delay: 2\n', undefined, T);
    limiter.setPolicy('delayed.example', { ratePerSec: 50 });
    assert.deepEqual(departures(limiter, 'https://delayed.example/'), [0, 2000, 4000]);
  });

  test('kept in snapshot()', () => {
    const limiter = fresh();
    limiter.setPolicy('*.example.com', { maxConcurrency: 2, quota: { limit: 100, windowSec: 3600 } });
    limiter.block('stop.example', 'asked to stop');
    const restored = Limiter.restore(limiter.snapshot());
    assert.deepEqual(restored.rules(), limiter.rules());
    assert.throws(() => restored.acquire('https://stop.example/', T), { name: 'HostBlocked', reason: 'asked to stop' });
  });

  test('bad input: an Error naming what is wrong, and nothing changes', () => {
    const limiter = fresh();
    limiter.setPolicy('a.example', { ratePerSec: 1 });
    const rules = limiter.rules();
    const cases = [
      [() => limiter.setPolicy(42, { ratePerSec: 1 }), TypeError, /pattern/],
      [() => limiter.setPolicy('a.example', 'fast'), TypeError, /policy/],
      [() => limiter.setPolicy('a.example', [1]), TypeError, /policy/],
      [() => limiter.setPolicy('a.example', { ratePerSecond: 1 }), TypeError, /unknown policy field ratePerSecond/],
      [() => limiter.setPolicy('a.example', { jitter: 0.5 }), TypeError, /unknown policy field jitter/],
      [() => limiter.setPolicy('a.example', { ratePerSec: '1' }), Error, /ratePerSec/],
      [() => limiter.setPolicy('a.example', { ratePerSec: 0 }), Error, /invalid ratePerSec/],
      [() => limiter.setPolicy('a.example', { quota: { limit: 0, windowSec: 1 } }), Error, /quota/],
      [() => limiter.setPolicy('*.com', { ratePerSec: 1 }), Error, /invalid rule "\*\.com"/],
      [() => limiter.setPolicy('', { ratePerSec: 1 }), Error, /invalid rule/],
      [() => limiter.setPolicy('a b', { ratePerSec: 1 }), Error, /invalid rule/],
      [() => limiter.block('a.example', 7), TypeError, /reason/],
      [() => limiter.block('a.example', 'x'.repeat(1001)), Error, /longer than 1000 bytes/],
      [() => limiter.unblock(null), TypeError, /pattern/],
    ];
    for (const [call, type, message] of cases) {
      assert.throws(call, (e) => e instanceof type && message.test(e.message), String(call));
      assert.deepEqual(limiter.rules(), rules, `${call} changed nothing`);
    }
    assert.deepEqual(departures(limiter, 'https://a.example/'), [0, 1000, 2000]);
  });
});

describe('block and unblock, judged from the origin', () => {
  let origin;
  before(async () => {
    origin = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nAllow: /\n' } });
  });
  after(() => origin.close());

  test('a blocked host receives nothing, robots.txt included; unblocked, the crawl goes on', async () => {
    const limiter = new Limiter({ ratePerSec: 20, burstCapacity: 1 });
    const host = new URL(origin.url('/')).host;
    limiter.block(host, 'the site owner opted out');
    for (const call of [() => limiter.fetch(origin.url('/a')), () => limiter.schedule(origin.url('/b'), () => 1)]) {
      await assert.rejects(call(), (e) => e.name === 'HostBlocked' && e.reason === 'the site owner opted out' &&
        e.message === `host ${host} is blocked: the site owner opted out`);
    }
    assert.throws(() => limiter.acquire(origin.url('/c')), { name: 'HostBlocked' });
    assert.equal(origin.log.length, 0, 'nothing reached the origin');
    limiter.unblock(host);
    assert.equal((await limiter.fetch(origin.url('/d'))).status, 200);
    assert.deepEqual(origin.log.map((e) => e.path), ['/robots.txt', '/d']);
  });

  test('a call waiting for its turn is refused as soon as its host is blocked', async () => {
    const limiter = new Limiter({ ratePerSec: 0.5, burstCapacity: 1, robots: 'ignore' });
    origin.log.length = 0;
    await (await limiter.fetch(origin.url('/first'))).arrayBuffer();
    const started = Date.now();
    const waiting = limiter.fetch(origin.url('/second'));
    await sleep(100);
    assert.throws(() => limiter.block('*.0.0.1', 'stop'), /not an IP address/, 'an IP address is a host, not a site');
    limiter.block(new URL(origin.url('/')).hostname, 'stop');
    await assert.rejects(waiting, { name: 'HostBlocked' });
    assert.ok(Date.now() - started < 1000, 'refused before its turn came');
    assert.deepEqual(origin.log.map((e) => e.path), ['/first']);
  });
});
