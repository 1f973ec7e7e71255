// The per-call options of `Limiter.fetch` and `schedule` (`userAgent`, `timeoutMs`, `onDecision`) and the shape of
// `stats`, against a real origin on 127.0.0.1, judged from the origin's own access log.
// Run: `node --test tests/js/options.test.mjs` (build first: `npm run build:pkg`).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter } from '../../pkg/node.js';
import { Origin, TOL, sleep } from './helpers.mjs';

describe('Limiter.fetch options against a real origin', () => {
  let origin;
  before(async () => {
    origin = await Origin.start({
      '/robots.txt': { status: 404 },
      '/retry': [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200, body: 'ok' }],
      '/slow': { status: 200, body: 'late', delayMs: 2000 },
    });
    await origin.warm();
  });
  after(() => origin.close());
  const sent = (path) => origin.log.filter((e) => e.path === path);

  test('userAgent: this call sends it; robots.txt and other calls send the config\'s; a header wins', async () => {
    const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 5, userAgent: 'configbot/1.0' });
    await (await limiter.fetch(origin.url('/ua-a'), { userAgent: 'callbot/2.0' })).text();
    await (await limiter.fetch(origin.url('/ua-b'))).text();
    await (await limiter.fetch(origin.url('/ua-c'), { userAgent: 'callbot/2.0', headers: { 'User-Agent': 'hdr/3' } }))
      .text();
    assert.equal(sent('/ua-a')[0].headers['user-agent'], 'callbot/2.0');
    assert.equal(sent('/ua-b')[0].headers['user-agent'], 'configbot/1.0');
    assert.equal(sent('/ua-c')[0].headers['user-agent'], 'hdr/3');
    assert.equal(sent('/robots.txt').at(-1).headers['user-agent'], 'configbot/1.0');
  });

  test('onDecision: one event per attempt, robots.txt first, the retry after its cooldown', async () => {
    const limiter = new Limiter({ ratePerSec: 10, burstCapacity: 1, maxRetries: 3, maxBackoffSec: 10 });
    const events = [];
    const res = await limiter.fetch(origin.url('/retry'), { onDecision: (e) => events.push(e) });
    assert.equal(res.status, 200);
    const host = origin.host;
    assert.deepEqual(
      events.map(({ host: h, url, purpose, attempt, layer, status }) => ({ h, url, purpose, attempt, layer, status })),
      [
        { h: host, url: origin.url('/robots.txt'), purpose: 'robots', attempt: 1, layer: 'none', status: 404 },
        { h: host, url: origin.url('/retry'), purpose: 'request', attempt: 1, layer: 'burst', status: 429 },
        { h: host, url: origin.url('/retry'), purpose: 'request', attempt: 2, layer: 'cooldown', status: 200 },
      ],
    );
    assert.ok(events.every((e) => Number.isInteger(e.waitMs) && e.waitMs >= 0), JSON.stringify(events));
    assert.ok(events[1].waitMs >= 100 - TOL && events[1].waitMs < 100 + 200, `burst wait ${events[1].waitMs}`);
    assert.ok(events[2].waitMs >= 1000 - TOL && events[2].waitMs < 1000 + 500, `cooldown wait ${events[2].waitMs}`);
    // the origin saw what the events say
    const [first, second] = sent('/retry').slice(-2);
    assert.deepEqual([first.status, second.status], [429, 200]);
    assert.ok(second.t - first.t >= 1000 - TOL);
  });

  test('onDecision for schedule: status of a Response result, none for another value or a throw', async () => {
    const limiter = new Limiter({ ratePerSec: 100, burstCapacity: 5, robots: 'ignore' });
    const events = [];
    const onDecision = (e) => events.push(e);
    await limiter.schedule(origin.url('/s1'), () => fetch(origin.url('/s1')), { onDecision });
    await limiter.schedule(origin.url('/s2'), () => 'not a response', { onDecision });
    await assert.rejects(limiter.schedule(origin.url('/s3'), () => { throw new Error('task failed'); }, { onDecision }),
      /task failed/);
    assert.deepEqual(events.map((e) => [e.purpose, e.attempt, e.status]), [
      ['request', 1, 200],
      ['request', 1, undefined],
      ['request', 1, undefined],
    ]);
  });

  test('timeoutMs bounds the wait for a turn: TimeoutError, nothing sent, the turn is given back', async () => {
    const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1, robots: 'ignore' });
    await (await limiter.fetch(origin.url('/t1'))).text();
    const started = performance.now();
    await assert.rejects(limiter.fetch(origin.url('/t2'), { timeoutMs: 200 }), (e) => e.name === 'TimeoutError');
    const took = performance.now() - started;
    assert.ok(took >= 200 - TOL && took < 200 + 300, `rejected after ${took.toFixed(0)} ms`);
    await sleep(1200);
    assert.equal(sent('/t2').length, 0, 'the timed-out request was never sent');
    const third = limiter.acquire(origin.url('/t3'));
    assert.equal(third.reserved, true, 'the limiter keeps working');
  });

  test('timeoutMs bounds a slow response too', async () => {
    const limiter = new Limiter({ ratePerSec: 10, robots: 'ignore' });
    const started = performance.now();
    await assert.rejects(limiter.fetch(origin.url('/slow'), { timeoutMs: 300 }), (e) => e.name === 'TimeoutError');
    const took = performance.now() - started;
    assert.ok(took >= 300 - TOL && took < 300 + 300, `rejected after ${took.toFixed(0)} ms`);
    assert.equal(sent('/slow').length, 1);
  });

  test('a timeout and a signal together: whichever comes first', async () => {
    const limiter = new Limiter({ ratePerSec: 0.5, burstCapacity: 1, robots: 'ignore' });
    limiter.acquire(origin.url('/x')); // the next turn is 2 s away
    const controller = new AbortController();
    const reason = new Error('stopped by the crawler');
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(limiter.fetch(origin.url('/both'), { signal: controller.signal, timeoutMs: 5000 }),
      (e) => e === reason);
    await assert.rejects(limiter.fetch(origin.url('/both'), { signal: new AbortController().signal, timeoutMs: 100 }),
      (e) => e.name === 'TimeoutError');
    assert.equal(sent('/both').length, 0);
  });

  test('bad options are TypeErrors naming the option; nothing is reserved or sent', async () => {
    const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1, robots: 'ignore' });
    const cases = [
      [{ timeoutMs: -5 }, /init\.timeoutMs/],
      [{ timeoutMs: '100' }, /init\.timeoutMs/],
      [{ timeoutMs: Infinity }, /init\.timeoutMs/],
      [{ onDecision: 'log' }, /init\.onDecision/],
      [{ userAgent: 'bad\nagent' }, /init\.userAgent/],
      [{ userAgent: 42 }, /init\.userAgent/],
    ];
    for (const [init, message] of cases) {
      await assert.rejects(limiter.fetch(origin.url('/bad'), init), (e) => e instanceof TypeError && message.test(e.message),
        JSON.stringify(init));
    }
    await assert.rejects(limiter.schedule(origin.url('/bad'), () => 1, { userAgent: 'x/1' }),
      (e) => e instanceof TypeError && /options\.userAgent/.test(e.message));
    await assert.rejects(limiter.schedule(origin.url('/bad'), () => 1, { timeoutMs: 0 }),
      (e) => e instanceof TypeError && /options\.timeoutMs/.test(e.message));
    assert.equal(sent('/bad').length, 0);
    assert.equal(limiter.acquire(origin.url('/bad')).waitMs, 0, 'no turn was taken by a refused call');
  });
});

describe('stats', () => {
  test('no negative token count: a debt is its own field; waits in whole milliseconds', () => {
    const limiter = new Limiter({ ratePerSec: 3, burstCapacity: 1 });
    for (let i = 0; i < 3; i++) limiter.acquire('https://example.com/', 0);
    const s = limiter.stats('example.com', 100);
    assert.equal(s.tokens, 0);
    assert.equal(s.tokenDebt, 1.7);
    assert.equal(s.nextSlotInMs, 567);
    assert.ok(Number.isInteger(s.nextDepartureInMs), String(s.nextDepartureInMs));
    const later = limiter.stats('example.com', 5000);
    assert.deepEqual([later.tokens, later.tokenDebt, later.nextDepartureInMs], [1, 0, 0]);
  });
});
