// robots.txt in the npm module, against real origins on 127.0.0.1: each origin's own access log shows what was
// requested, and no path robots.txt disallows may appear in it. Run: `node --test tests/js/` (build first).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Frontier, Limiter } from '../../pkg/node.js';
import { Origin, TOL, sleep, until } from './helpers.mjs';

const ROBOTS = [
  'User-agent: *',
  'Disallow: /private',
  'Allow: /private/open',
  '',
  'User-agent: hostpace',
  'Disallow: /no-hostpace',
  '',
].join('\n');
const TEXT = { 'Content-Type': 'text/plain' };
const UA = 'ExampleBot/2.1 (+https://example.com/bot)';

const paths = (origin) => origin.log.map((e) => e.path);
const isRobotsError = (name, url) => (e) => {
  assert.equal(e.name, name);
  assert.equal(e.url, url);
  return true;
};

describe('limiter.fetch obeys robots.txt', () => {
  test('robots.txt first, once, paced and with the User-Agent; a disallowed URL is never sent', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS } });
    await origin.warm();
    try {
      const limiter = new Limiter({ ratePerSec: 10, burstCapacity: 1, userAgent: UA });
      const page = await limiter.fetch(origin.url('/public'));
      assert.equal(page.status, 200);
      await page.text();
      await assert.rejects(limiter.fetch(origin.url('/private/x')), (e) => {
        isRobotsError('RobotsDisallowed', origin.url('/private/x'))(e);
        assert.equal(e.rule, 'Disallow: /private (line 2)');
        assert.match(e.message, /robots\.txt disallows .*\/private\/x: Disallow: \/private \(line 2\)/);
        return true;
      });
      await (await limiter.fetch(origin.url('/private/open/y'))).text();
      assert.deepEqual(paths(origin), ['/robots.txt', '/public', '/private/open/y']);
      for (const e of origin.log) assert.equal(e.headers['user-agent'], UA);
      const gap = origin.log[1].t - origin.log[0].t;
      assert.ok(gap >= 100 - TOL, `the first page came ${gap.toFixed(1)} ms after robots.txt: it is paced too`);
      assert.equal(limiter.allowed(origin.url('/private/x')), false);
      assert.equal(limiter.allowed(origin.url('/public')), true);
    } finally {
      await origin.close();
    }
  });

  test('the groups that name the crawler apply, the * group only without them', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, userAgent: 'hostpace/0.1 (+https://e.com/bot)' });
      await (await limiter.fetch(origin.url('/private/x'))).text();
      await assert.rejects(limiter.fetch(origin.url('/no-hostpace')), isRobotsError('RobotsDisallowed', origin.url('/no-hostpace')));
      assert.deepEqual(paths(origin), ['/robots.txt', '/private/x']);
    } finally {
      await origin.close();
    }
  });

  test('ten first requests at once: one robots.txt, and nothing before it', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS, delayMs: 100 } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, userAgent: UA });
      const urls = Array.from({ length: 10 }, (_, i) => origin.url(i % 2 ? `/page/${i}` : `/private/${i}`));
      const results = await Promise.allSettled(urls.map((u) => limiter.fetch(u).then((r) => r.text())));
      assert.deepEqual(
        results.map((r) => r.status),
        urls.map((u) => (u.includes('/private/') ? 'rejected' : 'fulfilled')),
      );
      assert.equal(paths(origin)[0], '/robots.txt');
      assert.equal(paths(origin).filter((p) => p === '/robots.txt').length, 1);
      assert.deepEqual(paths(origin).slice(1).sort(), ['/page/1', '/page/3', '/page/5', '/page/7', '/page/9']);
    } finally {
      await origin.close();
    }
  });

  test('a robots.txt answering 404 allows everything', async () => {
    const origin = await Origin.start({ '/robots.txt': { status: 404, body: 'User-agent: *\nDisallow: /\n' } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1 });
      for (const p of ['/a', '/private/b']) await (await limiter.fetch(origin.url(p))).text();
      assert.deepEqual(paths(origin), ['/robots.txt', '/a', '/private/b']);
    } finally {
      await origin.close();
    }
  });

  test('a robots.txt answering 503: only robots.txt is requested, and every URL is refused until a retry', async () => {
    const origin = await Origin.start({ '/robots.txt': { status: 503 } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, maxRetries: 0 });
      for (const p of ['/a', '/b', '/robots.txt']) {
        await assert.rejects(limiter.fetch(origin.url(p)), (e) => {
          isRobotsError('RobotsUnavailable', origin.url(p))(e);
          assert.ok(e.retryAfterMs > 50_000 && e.retryAfterMs <= 60_000, `retry in ${e.retryAfterMs} ms`);
          return true;
        });
      }
      let ran = false;
      await assert.rejects(
        limiter.schedule(origin.url('/c'), () => (ran = true)),
        isRobotsError('RobotsUnavailable', origin.url('/c')),
      );
      assert.equal(ran, false);
      assert.deepEqual(paths(origin), ['/robots.txt']);
      assert.equal(limiter.allowed(origin.url('/a')), false);
      // a minute later the retry is due: the next caller fetches robots.txt again
      const later = performance.timeOrigin + performance.now() + 61_000;
      assert.equal(limiter.visit(origin.url('/a'), later).turn, 'fetchRobots');
    } finally {
      await origin.close();
    }
  });

  test('no answer for robots.txt (a closed port) is as a 5xx: the URL is refused, nothing else is tried', async () => {
    const dead = await Origin.start();
    const url = dead.url('/gone');
    await dead.close();
    const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1 });
    await assert.rejects(limiter.fetch(url), isRobotsError('RobotsUnavailable', url));
    await assert.rejects(limiter.fetch(dead.url('/other')), isRobotsError('RobotsUnavailable', dead.url('/other')));
    assert.equal(limiter.allowed(url), false);
  });

  test('a robots.txt that never answers is given up after robotsTimeoutSec: refused, and asked for once', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS, delayMs: 4000 } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, robotsTimeoutSec: 1 });
      const started = performance.now();
      const waiting = [limiter.fetch(origin.url('/a')), limiter.fetch(origin.url('/b'))];
      for (const [i, p] of ['/a', '/b'].entries()) {
        await assert.rejects(waiting[i], isRobotsError('RobotsUnavailable', origin.url(p)));
      }
      const took = performance.now() - started;
      assert.ok(took >= 1000 - TOL && took < 2500, `given up after ${took.toFixed(0)} ms`);
      await assert.rejects(limiter.fetch(origin.url('/c')), isRobotsError('RobotsUnavailable', origin.url('/c')));
      assert.deepEqual(paths(origin), ['/robots.txt'], 'nothing but one robots.txt');
    } finally {
      await origin.close();
    }
  });

  test('a robots.txt that redirects is followed', async () => {
    const origin = await Origin.start({
      '/robots.txt': { status: 301, headers: { Location: '/real-robots.txt' } },
      '/real-robots.txt': { headers: TEXT, body: 'User-agent: *\nDisallow: /secret\n' },
    });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1 });
      await assert.rejects(limiter.fetch(origin.url('/secret/1')), isRobotsError('RobotsDisallowed', origin.url('/secret/1')));
      await (await limiter.fetch(origin.url('/open'))).text();
      assert.deepEqual(paths(origin), ['/robots.txt', '/real-robots.txt', '/open']);
    } finally {
      await origin.close();
    }
  });

  test('a robots.txt redirecting more than five times is unavailable: everything allowed', async () => {
    const origin = await Origin.start({ '/robots.txt': { status: 302, headers: { Location: '/robots.txt' } } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1 });
      await (await limiter.fetch(origin.url('/x'))).text();
      assert.deepEqual(paths(origin), [...Array(6).fill('/robots.txt'), '/x'], 'five redirects followed, each paced');
      const gaps = origin.log.slice(1).map((e, i) => e.t - origin.log[i].t);
      assert.ok(gaps.every((g) => g >= 20 - TOL), `gaps ${gaps.map((g) => g.toFixed(1))}`);
    } finally {
      await origin.close();
    }
  });

  test('a redirect is followed hop by hop: each paced, each obeying robots.txt', async () => {
    const other = await Origin.start({ '/robots.txt': { headers: TEXT, body: 'User-agent: *\nDisallow: /theirs\n' } });
    const origin = await Origin.start({
      '/robots.txt': { headers: TEXT, body: ROBOTS },
      '/old': { status: 301, headers: { Location: '/new' } },
      '/to-private': { status: 302, headers: { Location: '/private/x' } },
      '/away': { status: 307, headers: { Location: other.url('/theirs/1') } },
      '/form': { status: 303, headers: { Location: '/done' } },
      '/to-ftp': { status: 302, headers: { Location: 'ftp://127.0.0.1/file' } },
      '/to-other': { status: 302, headers: { Location: other.url('/open') } },
    });
    await origin.warm();
    try {
      const limiter = new Limiter({ ratePerSec: 10, burstCapacity: 1, userAgent: UA });
      const page = await limiter.fetch(origin.url('/old'));
      assert.equal(await page.text(), 'page /new');
      assert.equal(page.url, origin.url('/new'));
      assert.equal(page.redirected, true);
      const hop = origin.log[2].t - origin.log[1].t;
      assert.ok(hop >= 100 - TOL, `the redirect's target came ${hop.toFixed(1)} ms after it: paced`);
      await assert.rejects(limiter.fetch(origin.url('/to-private')), isRobotsError('RobotsDisallowed', origin.url('/private/x')));
      await assert.rejects(limiter.fetch(origin.url('/away')), isRobotsError('RobotsDisallowed', other.url('/theirs/1')));
      const done = await limiter.fetch(origin.url('/form'), { method: 'POST', body: 'a=1', headers: { 'content-type': 'text/plain' } });
      await done.text();
      assert.deepEqual(paths(origin), ['/robots.txt', '/old', '/new', '/to-private', '/away', '/form', '/done']);
      assert.deepEqual(origin.log.slice(-2).map((e) => e.method), ['POST', 'GET'], 'a 303 is followed with a GET');
      assert.equal(origin.log.at(-1).headers['content-type'], undefined);
      assert.deepEqual(paths(other), ['/robots.txt'], 'the other host: its robots.txt, never the disallowed path');
      assert.equal(other.log[0].headers['user-agent'], UA);
      const manual = await limiter.fetch(origin.url('/old'), { redirect: 'manual' });
      assert.equal(manual.status, 301, 'redirect: "manual" is the caller\'s to follow');
      await manual.body?.cancel();
      await assert.rejects(limiter.fetch(origin.url('/to-ftp')), (e) => e instanceof TypeError && /ftp:/.test(e.message));
      const credentials = { authorization: 'Bearer s3cret', cookie: 'session=1', 'proxy-authorization': 'Basic x' };
      const there = await limiter.fetch(origin.url('/to-other'), { headers: credentials });
      await there.text();
      assert.equal(there.hostpaceAttempts, 2, 'both hops');
      const seen = other.log.at(-1);
      assert.equal(seen.path, '/open');
      for (const name of Object.keys(credentials)) assert.equal(seen.headers[name], undefined, `${name} not sent to another origin`);
      assert.equal(origin.log.at(-1).headers.cookie, 'session=1', 'the first origin got them');
    } finally {
      await origin.close();
      await other.close();
    }
  });

  test('robots: "ignore" fetches no robots.txt', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, robots: 'ignore' });
      await (await limiter.fetch(origin.url('/private/x'))).text();
      assert.deepEqual(paths(origin), ['/private/x']);
      assert.equal(limiter.visit(origin.url('/private/x')).turn, 'go', 'nothing asked of robots.txt');
      assert.equal(limiter.robotsCheck(origin.url('/private/x')).verdict, 'pending', 'nothing known of it');
    } finally {
      await origin.close();
    }
  });

  test('schedule obeys too: the task of a disallowed URL never runs', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1, userAgent: UA });
      let ran = false;
      const url = origin.url('/private/z');
      await assert.rejects(limiter.schedule(url, () => (ran = true)), isRobotsError('RobotsDisallowed', url));
      assert.equal(ran, false);
      assert.equal(await limiter.schedule(origin.url('/fine'), () => 'ran'), 'ran');
      assert.deepEqual(paths(origin), ['/robots.txt']);
    } finally {
      await origin.close();
    }
  });

  test('an aborted wait for another call\'s robots.txt rejects with the signal\'s reason', async () => {
    const origin = await Origin.start({ '/robots.txt': { headers: TEXT, body: ROBOTS, delayMs: 300 } });
    try {
      const limiter = new Limiter({ ratePerSec: 50, burstCapacity: 1 });
      const first = limiter.fetch(origin.url('/a'));
      await until(() => origin.log.length === 1, { withinMs: 2000 });
      const controller = new AbortController();
      const second = limiter.fetch(origin.url('/b'), { signal: controller.signal });
      const reason = new Error('stop');
      await sleep(50);
      controller.abort(reason);
      await assert.rejects(second, (e) => e === reason);
      await (await first).text();
      assert.deepEqual(paths(origin), ['/robots.txt', '/a']);
    } finally {
      await origin.close();
    }
  });
});

describe('robots.txt for crawlers that fetch it themselves', () => {
  const T = 1_000_000;
  test('setRobots, robotsStatus, visit and robotsCheck with the caller\'s clock', () => {
    const limiter = new Limiter({ userAgent: UA });
    const url = 'https://example.com/private/x';
    assert.equal(limiter.allowed(url, T), true, 'nothing known yet: allowed');
    assert.deepEqual(limiter.robotsCheck(url, T), { verdict: 'pending' });
    const decision = { host: 'example.com', waitMs: 0, layer: 'none', departsMs: T, reserved: true };
    assert.deepEqual(limiter.visit(url, T), { turn: 'fetchRobots', decision, fetch: 0, timeoutMs: 60_000 });
    assert.deepEqual(limiter.visit(url, T + 1), { turn: 'hold', waitMs: 100 }, 'visit again in 100 ms');
    assert.deepEqual(limiter.robotsCheck(url, T + 1), { verdict: 'pending' });
    limiter.setRobots('example.com', ROBOTS, undefined, T + 2);
    assert.deepEqual(limiter.robotsCheck(url, T + 3), { verdict: 'disallowed', rule: 'Disallow: /private (line 2)' });
    assert.equal(limiter.allowed(url, T + 3), false);
    assert.equal(limiter.allowed('https://example.com/private/open/1', T + 3), true);
    assert.equal(limiter.visit(url, T + 2 + 86_400_000).turn, 'fetchRobots', 'a day later it is fetched again');
    limiter.robotsStatus('https://example.com/robots.txt', 503, T + 2 + 86_400_001);
    assert.deepEqual(limiter.robotsCheck('https://example.com/', T + 2 + 86_400_002), {
      verdict: 'unreachable',
      retryMs: 59_999,
    });
    limiter.robotsStatus('example.com', 404, T + 2 + 86_460_001);
    assert.equal(limiter.allowed(url, T + 2 + 86_460_002), true, '4xx: everything allowed');
    limiter.robotsStatus('example.com', 0, T + 2 + 86_460_003);
    assert.equal(limiter.allowed('https://example.com/', T + 2 + 86_460_004), false, 'no answer: as a 5xx');
  });

  test('an answer of a fetch given up does not replace the answer of a newer fetch', () => {
    const limiter = new Limiter({ userAgent: UA });
    const url = 'https://example.com/private/x';
    const first = limiter.visit(url, T);
    assert.equal(first.timeoutMs, 60_000);
    // the caller gives up at 60 s; another fetch is handed out a second later
    assert.equal(limiter.visit(url, T + 60_999).turn, 'hold');
    const second = limiter.visit(url, T + 61_000);
    assert.deepEqual([first.turn, second.turn], ['fetchRobots', 'fetchRobots'], 'the first is given up after its timeout');
    assert.notEqual(first.fetch, second.fetch);
    assert.ok(limiter.robotsFetched(url, 200, ROBOTS, undefined, T + 61_001, second.fetch));
    assert.equal(limiter.robotsFetched(url, 200, '', undefined, T + 61_002, first.fetch), undefined, 'stale');
    assert.equal(limiter.robotsFetched(url, 503, undefined, undefined, T + 61_003, first.fetch), undefined);
    assert.equal(limiter.robotsCheck(url, T + 61_004).verdict, 'disallowed', 'the newer answer stands');
    assert.equal(limiter.robotsFetched(url, 200, ROBOTS, undefined, T + 61_005, second.fetch), undefined, 'answered');
    // a report without a fetch number (a crawler fetching robots.txt itself) always counts
    limiter.setRobots(url, '', undefined, T + 61_006);
    assert.equal(limiter.robotsCheck(url, T + 61_007).verdict, 'allowed');
  });

  test('robotsMaxAgeSec keeps a copy for less than a day', () => {
    const limiter = new Limiter({ robotsMaxAgeSec: 600 });
    const url = 'https://example.com/x';
    assert.equal(limiter.visit(url, T).turn, 'fetchRobots');
    limiter.setRobots(url, ROBOTS, undefined, T);
    assert.equal(limiter.visit(url, T + 599_999).turn, 'go');
    assert.equal(limiter.visit(url, T + 600_000).turn, 'fetchRobots');
  });

  test('rules for a host the registry has no room for: unreachable until a retry, never left pending', () => {
    const limiter = new Limiter({ maxHosts: 1, ratePerSec: 1, burstCapacity: 1, userAgent: UA });
    for (let i = 0; i < 3; i++) limiter.acquire('https://busy.example/', T); // owes a wait: not evictable
    assert.throws(() => limiter.visit('https://other.example/private/x', T), /maxHosts|full/, 'no room to reserve');
    assert.equal(limiter.robotsCheck('https://other.example/private/x', T).verdict, 'pending');
    assert.throws(() => limiter.setRobots('other.example', ROBOTS, undefined, T), /maxHosts|full/);
    assert.deepEqual(limiter.robotsCheck('https://other.example/private/x', T + 1), {
      verdict: 'unreachable',
      retryMs: 59_999,
    });
  });

  test('a robots.txt fetch waiting for its host\'s turn has its timeout from its departure', () => {
    const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1, robotsTimeoutSec: 5 });
    for (let i = 0; i < 3; i++) limiter.acquire('https://example.com/x', T); // the next turn is 3 s away
    const turn = limiter.visit('https://example.com/a', T);
    assert.deepEqual([turn.turn, turn.decision.waitMs, turn.timeoutMs], ['fetchRobots', 3000, 8000]);
    assert.deepEqual(limiter.visit('https://example.com/a', T + 8999), { turn: 'hold', waitMs: 1 });
    assert.equal(limiter.visit('https://example.com/a', T + 9000).turn, 'fetchRobots');
  });

  test('Limiter.restore keeps the crawler: userAgent, robots and the robots.txt times', () => {
    const config = { userAgent: 'mybot/1.0', robots: 'ignore', robotsMaxAgeSec: 600, robotsTimeoutSec: 5 };
    const restored = Limiter.restore(new Limiter(config).snapshot());
    assert.equal(restored.userAgent, 'mybot/1.0');
    assert.equal(restored.visit('https://example.com/x').turn, 'go', 'robots: "ignore"');
    const obeying = Limiter.restore(new Limiter({ ...config, robots: 'obey' }).snapshot());
    assert.equal(obeying.visit('https://example.com/x', T).timeoutMs, 5000);
    obeying.setRobots('example.com', 'User-agent: mybot\nDisallow: /x\n', undefined, T);
    assert.equal(obeying.allowed('https://example.com/x', T + 1), false, 'matched as mybot');
    assert.equal(obeying.visit('https://example.com/y', T + 600_000).turn, 'fetchRobots', 'max age kept');
    assert.throws(() => Limiter.restore('hostpace-snapshot-1 2 0 0'), /invalid snapshot: malformed: expected user agent/);
    const bad = new Limiter(config).snapshot().replace('9:mybot/1.0', '9:mybot\n1.0');
    assert.throws(() => Limiter.restore(bad), /userAgent/);
  });

  test('Frontier.push refuses what the host\'s robots.txt disallows, and counts it', () => {
    const limiter = new Limiter({ userAgent: UA });
    const frontier = new Frontier(limiter);
    assert.equal(frontier.push('https://example.com/private/x'), true, 'robots.txt not known yet: queued');
    limiter.setRobots('example.com', ROBOTS);
    assert.equal(frontier.push('https://example.com/private/y'), false);
    assert.equal(frontier.push(new URL('https://example.com/private/open/z')), true, 'an Allow rule');
    assert.equal(frontier.push('https://other.example/private/y'), true, 'another host');
    assert.deepEqual([frontier.size, frontier.refused], [3, 1]);
    const ignoring = new Limiter({ userAgent: UA, robots: 'ignore' });
    ignoring.setRobots('example.com', ROBOTS);
    const all = new Frontier(ignoring);
    assert.equal(all.push('https://example.com/private/y'), true, 'robots: "ignore"');
    assert.equal(all.refused, 0);
  });

  test('a Frontier holds a host whose robots.txt is being fetched until it arrives', () => {
    const limiter = new Limiter({ userAgent: UA });
    const frontier = new Frontier(limiter);
    for (const url of ['https://example.com/1', 'https://example.com/2', 'https://other.example/1']) frontier.push(url);
    assert.equal(frontier.pop(T), 'https://example.com/1', 'nothing asked of its robots.txt yet: popped');
    const turn = limiter.visit('https://example.com/1', T); // what fetch does first
    assert.equal(turn.turn, 'fetchRobots');
    assert.equal(frontier.pop(T), 'https://other.example/1', 'example.com is held while its robots.txt is fetched');
    assert.equal(frontier.pop(T), undefined);
    assert.equal(frontier.waitMs(T), 100, 'looked at again in 100 ms (HOLD_RECHECK)');
    assert.equal(frontier.take(T + 50), undefined, 'still held, and take reserves nothing');
    assert.equal(limiter.stats('example.com', T + 50).decisions, 1, 'only the departure of robots.txt is reserved');
    limiter.robotsFetched('example.com', 200, 'User-agent: *\nAllow: /\n', undefined, T + 60, turn.fetch);
    assert.equal(frontier.waitMs(T + 60), 0);
    assert.equal(frontier.pop(T + 60), 'https://example.com/2', 'robots.txt arrived: the host goes on');
  });

  test('bad arguments are errors naming them', () => {
    const limiter = new Limiter();
    assert.throws(() => limiter.robotsStatus('example.com', 'x'), (e) => e instanceof TypeError && /status/.test(e.message));
    assert.throws(() => limiter.robotsStatus('example.com', 1000), /invalid status/);
    assert.throws(() => limiter.allowed(42), (e) => e instanceof TypeError && /url/.test(e.message));
    assert.throws(() => limiter.robotsCheck('not a url'), /not a url/);
    assert.throws(() => limiter.visit('not a url'), /not a url/);
    assert.throws(() => limiter.visit('https://example.com/', 'soon'), (e) => e instanceof TypeError && /nowMs/.test(e.message));
    assert.throws(() => limiter.visit('https://example.com/', undefined, -1), /maxWaitMs/);
    assert.throws(() => new Limiter({ userAgent: 'a\nb' }), /userAgent/);
    assert.throws(() => new Limiter({ userAgent: 7 }), /userAgent/);
    assert.throws(() => new Limiter({ robots: 'maybe' }), /robots/);
    for (const [field, value] of [['robotsMaxAgeSec', 86_401], ['robotsMaxAgeSec', 0.5], ['robotsTimeoutSec', 601],
      ['robotsTimeoutSec', NaN]]) {
      assert.throws(() => new Limiter({ [field]: value }), new RegExp(`invalid config field ${field}`));
    }
    assert.throws(() => new Limiter({ robotsTimeoutSec: '5' }), (e) => e instanceof TypeError && /robotsTimeoutSec/.test(e.message));
    assert.throws(() => limiter.robotsFetched('example.com', 200, '', undefined, undefined, -1), /invalid fetch/);
    assert.equal(new Limiter().userAgent.startsWith('hostpace/'), true);
  });
});
