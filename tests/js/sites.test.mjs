// Politeness groups in the package: under `groupBy: 'site'` the hosts of one site (its registrable domain, by the
// Public Suffix List bundled in pkg/psl.js) are paced as one beside each host's own limits. Decisions on an
// injected clock with an injected random source (`randomSeed`) are exact; two hosts of one site crawled through a
// real origin on 127.0.0.1 are judged from its access log. The bundled list must answer the conformance file
// (tests/data/public-suffix-cases.txt) exactly as the core's list does (tests/sites.rs).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { Frontier, HostLimiter, Limiter, SharedLimiter, audit } from '../../pkg/node.js';
import { setPublicSuffixList } from '../../pkg/hostpace.js';
import { registrableDomain } from '../../pkg/psl.js';
import { memoryStore } from './memory-store.mjs';
import { Origin, TOL, assertSpacing } from './helpers.mjs';

const T = 1_000_000;

/** A limiter grouping hosts by site: 1 request/s per host, burst 1, robots.txt not fetched, a fixed seed. */
const bySite = (config = {}) =>
  new Limiter({ ratePerSec: 1, burstCapacity: 1, robots: 'ignore', randomSeed: 7, groupBy: 'site', ...config });

/** `[departure (ms from T), layer]` of each URL in turn, all reserved at T. */
const decide = (limiter, urls) =>
  urls.map((url) => {
    const d = limiter.acquire(url, T);
    return [d.departsMs - T, d.layer];
  });

/** The departures (ms from T) of each URL in turn, all reserved at T. */
const departures = (limiter, urls) => decide(limiter, urls).map(([at]) => at);

describe('groupBy site', () => {
  test('the hosts of a site are paced together; other sites, IP addresses and localhost are not', () => {
    const limiter = bySite();
    const site = ['https://www.example.com/', 'https://img.example.com/', 'https://example.com:8443/'];
    assert.deepEqual(decide(limiter, [...site, 'https://www.example.com/a']), [
      [0, 'none'],
      [1000, 'site'],
      [2000, 'site'],
      [3000, 'site'],
    ]);
    const others = ['https://www.example.org/', 'http://127.0.0.1:8080/', 'http://localhost:3000/', 'https://[::1]/'];
    assert.deepEqual(departures(limiter, others), [0, 0, 0, 0]);
    // the list's private section: two github.io users are two sites
    assert.deepEqual(departures(limiter, ['https://alice.github.io/', 'https://bob.github.io/']), [0, 0]);
    // grouped by host (the default), the same hosts go together
    const byHost = new Limiter({ ratePerSec: 1, burstCapacity: 1, robots: 'ignore', randomSeed: 7 });
    assert.deepEqual(departures(byHost, [...site, 'https://www.example.com/a']), [0, 0, 0, 1000]);
  });

  test('the strictest of host and site wins, and a departure is charged to both', () => {
    // a slow host, a fast site: each host keeps its own pace, the site spaces its hosts' departures
    const fastSite = bySite({ ratePerSec: 0.5, siteLimits: { ratePerSec: 10 } });
    const pair = ['https://www.example.com/', 'https://img.example.com/'];
    assert.deepEqual(decide(fastSite, [...pair, ...pair]), [
      [0, 'none'],
      [100, 'site'],
      [2000, 'burst'],
      [2100, 'burst'],
    ]);
    // a fast host, a slow site: the site sets every wait after the first
    const slowSite = bySite({ ratePerSec: 10, siteLimits: { minIntervalSec: 1 } });
    assert.deepEqual(decide(slowSite, [...pair, ...pair]), [
      [0, 'none'],
      [1000, 'site'],
      [2000, 'site'],
      [3000, 'site'],
    ]);
    // a quota of the site's own, across its hosts (a window of 60 s counted in 16 parts: the next goes at 64 s)
    const quota = bySite({ ratePerSec: 10, siteLimits: { quota: { limit: 3, windowSec: 60 } } });
    const hosts = ['a', 'b', 'c', 'd'].map((h) => `https://${h}.example.com/`);
    assert.deepEqual(departures(quota, [...hosts, 'https://a.example.org/']), [0, 100, 200, 64_000, 0]);
  });

  test("stats name a host's site, and of the site its own state", () => {
    const limiter = bySite({ siteLimits: { ratePerSec: 2 } });
    departures(limiter, ['https://www.example.com/', 'https://img.example.com/', 'https://www.example.com/']);
    departures(limiter, ['http://127.0.0.1:8080/']);
    const img = limiter.stats('img.example.com', T);
    assert.equal(img.host, 'img.example.com');
    assert.equal(img.site, '*.example.com');
    assert.equal(img.decisions, 1);
    assert.equal(img.waitMsByLayer.site, 500);
    const site = limiter.stats('*.example.com', T);
    assert.equal(site.host, '*.example.com');
    assert.equal(site.site, null);
    assert.equal(site.decisions, 3, 'every departure of its hosts');
    assert.equal(site.ratePerSec, 2);
    assert.equal(site.capacity, 1);
    assert.equal(site.nextDepartureInMs, 1500);
    assert.equal(limiter.stats('*.Example.COM.', T).host, '*.example.com', 'a site named as a host is');
    assert.equal(limiter.stats('127.0.0.1:8080', T).site, null, 'an IP address has no site');
    assert.equal(limiter.stats('*.example.org', T), undefined, 'a site none of whose hosts went');
    // grouped by host, no host has a site
    const byHost = new Limiter({ robots: 'ignore' });
    byHost.acquire('https://www.example.com/', T);
    assert.equal(byHost.stats('www.example.com', T).site, null);
    assert.equal(byHost.stats('*.example.com', T), undefined);
  });

  test('a site rule paces the site itself; a host rule never takes its host out of its site', () => {
    const limiter = bySite({ ratePerSec: 10 });
    limiter.setPolicy('*.example.com', { minIntervalSec: 2 });
    limiter.setPolicy('fast.example.com', { ratePerSec: 100 });
    const urls = ['https://www.example.com/', 'https://img.example.com/', 'https://fast.example.com/'];
    assert.deepEqual(decide(limiter, urls), [
      [0, 'none'],
      [2000, 'site'],
      [4000, 'site'],
    ]);
    assert.equal(limiter.stats('*.example.com', T).intervalMs, 2000);
    // grouped by host, the rule paces each host on its own
    const byHost = new Limiter({ ratePerSec: 10, burstCapacity: 1, robots: 'ignore', randomSeed: 7 });
    byHost.setPolicy('*.example.com', { minIntervalSec: 2 });
    assert.deepEqual(departures(byHost, [...urls, urls[0]]), [0, 0, 0, 2000]);
  });

  test("peek and a frontier hand out a new host of a busy site at the site's turn", () => {
    const limiter = bySite();
    limiter.acquire('https://www.example.com/', T);
    const peek = limiter.peek('https://img.example.com/', T);
    assert.deepEqual([peek.waitMs, peek.layer], [1000, 'site']);
    assert.equal(limiter.stats('img.example.com', T), undefined, 'a peek changes nothing');
    const frontier = new Frontier(limiter);
    frontier.push('https://img.example.com/a');
    frontier.push('https://www.example.org/b');
    assert.equal(frontier.take(T), 'https://www.example.org/b');
    assert.equal(frontier.take(T), undefined, 'img.example.com waits for its site');
    assert.equal(frontier.waitMs(T), 1000);
    assert.equal(frontier.take(T + 1000), 'https://img.example.com/a');
    assert.equal(limiter.stats('*.example.com', T + 1000).decisions, 2);
  });

  test("a site's permits bound its requests in flight, whichever host; one permitId gives back both", () => {
    // hosts without a limit of their own, the site one permit
    const limiter = bySite({ ratePerSec: 100, siteLimits: { maxConcurrency: 1 } });
    const first = limiter.acquire('https://www.example.com/', T);
    assert.equal(typeof first.permitId, 'number', 'the site\'s permit rides with the departure');
    assert.equal(limiter.stats('*.example.com', T).inFlight, 1);
    // held until 5 s past www's instant: img waits for it, reserving nothing
    const waits = limiter.acquire('https://img.example.com/', T);
    assert.deepEqual([waits.reserved, waits.layer, waits.waitMs], [false, 'concurrency', 5000]);
    limiter.release('https://www.example.com/', first.permitId);
    assert.equal(limiter.stats('*.example.com', T).inFlight, 0);
    const second = limiter.acquire('https://img.example.com/', T + 10);
    assert.deepEqual([second.reserved, second.waitMs], [true, 0]);
    // hosts with 2 each and the site 3: the host's permit and the site's go by one id, and back together
    const both = bySite({ ratePerSec: 100, maxConcurrency: 2, siteLimits: { maxConcurrency: 3 } });
    const ids = ['www', 'www', 'img'].map((h) => both.acquire(`https://${h}.example.com/`, T).permitId);
    assert.equal(new Set(ids).size, 3, `${ids}`);
    assert.equal(both.acquire('https://www.example.com/', T).layer, 'concurrency', "www's own are held");
    assert.equal(both.acquire('https://example.com/', T).layer, 'concurrency', "the site's are held");
    both.release('https://www.example.com/', ids[0]);
    assert.deepEqual([both.stats('www.example.com', T).inFlight, both.stats('*.example.com', T).inFlight], [1, 2]);
    assert.equal(both.acquire('https://example.com/', T).reserved, true);
    // by default a site takes the config's knob, as every other; 0 limits only the hosts
    const inherits = bySite({ ratePerSec: 100, maxConcurrency: 1 });
    inherits.acquire('https://www.example.com/', T);
    assert.equal(inherits.acquire('https://img.example.com/', T).layer, 'concurrency');
    const hostsOnly = bySite({ ratePerSec: 100, maxConcurrency: 1, siteLimits: { maxConcurrency: 0 } });
    hostsOnly.acquire('https://www.example.com/', T);
    assert.equal(hostsOnly.acquire('https://img.example.com/', T).reserved, true);
    for (const l of [limiter, both, inherits, hostsOnly]) l.free();
  });

  test('onDecision tells the layer site', async () => {
    const limiter = bySite({ ratePerSec: 20, siteLimits: { minIntervalSec: 0.05 } });
    const events = [];
    const onDecision = (e) => events.push(e);
    const urls = ['https://www.example.com/', 'https://img.example.com/'];
    await Promise.all(urls.map((url) => limiter.schedule(url, () => 1, { onDecision })));
    assert.deepEqual(events.map((e) => [e.host, e.layer]), [
      ['www.example.com', 'none'],
      ['img.example.com', 'site'],
    ]);
    // at least the site's spacing (more when the first one left late: the spacing counts from its departure)
    assert.ok(events[1].waitMs >= 50 - TOL, `waited ${events[1].waitMs} ms`);
  });

  test('a snapshot keeps groupBy, siteLimits and what the site owes', () => {
    const limiter = bySite({ siteLimits: { ratePerSec: 0.5 } });
    departures(limiter, ['https://www.example.com/', 'https://img.example.com/']);
    const restored = Limiter.restore(limiter.snapshot());
    // the site owes what it owed (img went at 2 s); a new host of the site waits for it, at the site's rate
    assert.deepEqual(decide(restored, ['https://new.example.com/', 'https://www.example.org/']), [
      [4000, 'site'],
      [0, 'none'],
    ]);
    assert.deepEqual(decide(restored, ['https://www.example.org/', 'https://img.example.org/']), [
      [2000, 'site'],
      [4000, 'site'],
    ]);
    assert.equal(restored.stats('*.example.com', T).ratePerSec, 0.5);
    // and the same decisions as the limiter it was taken from
    assert.deepEqual(decide(limiter, ['https://new.example.com/']), [[4000, 'site']]);
  });
});

describe('bad input', () => {
  test('a wrong type, an unknown key or a bad value is an error naming the field', () => {
    const plainObject = 'expected a plain object';
    const cases = [
      [{ groupBy: 'domain' }, TypeError, 'invalid config field groupBy: "domain" (expected "host" or "site")'],
      [{ groupBy: 1 }, TypeError, 'invalid config field groupBy: expected "host" or "site", got a number'],
      [{ siteLimits: 5 }, TypeError, `invalid config field siteLimits: ${plainObject}, got a number`],
      [{ siteLimits: [] }, TypeError, `invalid config field siteLimits: ${plainObject}, got an array`],
      [{ siteLimits: new Map() }, TypeError, `invalid config field siteLimits: ${plainObject}, got an object`],
      [{ ratePerSec: new Number(2) }, TypeError, 'invalid config field ratePerSec: expected a number, got an object'],
      [
        { siteLimits: { quota: { limit: 5, windowSec: [1] } } },
        TypeError,
        /quota\.windowSec: expected a number, got an array$/,
      ],
      [
        { siteLimits: { quota: { limit: 5, windowSec: {} } } },
        TypeError,
        /quota\.windowSec: expected a number, got an object$/,
      ],
      // a key __proto__ is a key like another, not the prototype of what the module reads
      [
        JSON.parse('{"__proto__": {"ratePerSec": 1000}}'),
        TypeError,
        /^unknown config field __proto__ \(expected one of /,
      ],
      [
        { maxConcurrency: 1e-7 },
        TypeError,
        'invalid config field maxConcurrency: 0.0000001 (expected a whole number from 0 to 4294967295)',
      ],
      [{ robots: 'maybe' }, TypeError, 'invalid config field robots: "maybe" (expected "obey" or "ignore")'],
      [
        { siteLimits: { ratePerSec: '2' } },
        TypeError,
        'invalid config field siteLimits.ratePerSec: expected a number, got a string',
      ],
      [
        { siteLimits: { rate: 2 } },
        TypeError,
        'unknown config field siteLimits.rate ' +
          '(expected one of ratePerSec, burstCapacity, minIntervalSec, maxConcurrency, quota)',
      ],
      [{ siteLimits: { jitter: 0.5 } }, TypeError, /^unknown config field siteLimits\.jitter /],
      [{ siteLimits: { quota: 5 } }, TypeError, `invalid config field siteLimits.quota: ${plainObject}, got a number`],
      [{ siteLimits: { quota: { limit: 5 } } }, TypeError, 'missing config field siteLimits.quota.windowSec'],
      [{ siteLimits: { quota: { limit: 5, windowSec: 1, per: 'day' } } }, TypeError, /^unknown .* siteLimits\.quota\.per /],
      [
        { siteLimits: { maxConcurrency: 1.5 } },
        TypeError,
        'invalid config field siteLimits.maxConcurrency: 1.5 (expected a whole number from 0 to 4294967295)',
      ],
      [{ siteLimits: { ratePerSec: 0 } }, Error, /^invalid siteLimits\.ratePerSec: 0 /],
      [{ siteLimits: { burstCapacity: 0.5 } }, Error, /^invalid siteLimits\.burstCapacity: 0\.5 /],
      [{ siteLimits: { minIntervalSec: -1 } }, Error, /^invalid siteLimits\.minIntervalSec: -1 /],
      [{ siteLimits: { quota: { limit: 0, windowSec: 1 } } }, Error, /^invalid siteLimits\.quota\.limit: 0 /],
      [
        { siteLimits: { maxConcurrency: 2 ** 32 } },
        TypeError,
        'invalid config field siteLimits.maxConcurrency: 4294967296 (expected a whole number from 0 to 4294967295)',
      ],
      [
        { siteLimits: { quota: { limit: 5, windowSec: null } } },
        TypeError,
        'missing config field siteLimits.quota.windowSec',
      ],
      [
        { siteLimits: { quota: { windowSec: '1', limit: 5 } } },
        TypeError,
        /siteLimits\.quota\.windowSec: expected a number, got a string$/,
      ],
    ];
    for (const [config, type, message] of cases) {
      const matches = (e) =>
        e.constructor === type && (typeof message === 'string' ? e.message === message : message.test(e.message));
      assert.throws(() => new Limiter({ groupBy: 'site', ...config }), matches, JSON.stringify(config));
    }
    // a field set to null takes its default
    assert.doesNotThrow(() => new Limiter({ groupBy: 'site', siteLimits: { ratePerSec: null, quota: null } }));
    // a throwing getter never crosses into the module
    const hostile = {
      siteLimits: {
        get ratePerSec() {
          throw new Error('no');
        },
      },
    };
    assert.throws(() => new Limiter(hostile), { name: 'TypeError', message: /^invalid config: field siteLimits: .*threw: no/ });
    // null takes the default
    const nulls = new Limiter({ groupBy: null, siteLimits: null, burstCapacity: 1 });
    assert.deepEqual(departures(nulls, ['https://a.example.com/', 'https://b.example.com/']), [0, 0]);
    // maxConcurrency 0 is no limit, as for a host
    assert.equal(bySite({ siteLimits: { maxConcurrency: 0 } }).acquire('https://a.example.com/', T).waitMs, 0);
  });

  test('a bad call loses no state', () => {
    const limiter = bySite();
    assert.deepEqual(departures(limiter, ['https://www.example.com/', 'https://img.example.com/']), [0, 1000]);
    const bad = [
      [() => limiter.stats('*.com', T), Error, /^invalid host \*\.com: a site is named as \*\.example\.com/],
      [() => limiter.stats('*.example.com:80', T), Error, /^invalid host \*\.example\.com:80/],
      [() => limiter.stats('*.127.0.0.1', T), Error, /^invalid host \*\.127\.0\.0\.1/],
      [() => limiter.setPolicy('*.example.com', { ratePerSec: 0 }), Error, /invalid ratePerSec/],
      [() => limiter.setPolicy('*.example.com', { groupBy: 'host' }), TypeError, /unknown policy field groupBy/],
      [() => limiter.acquire('https://www.example.com/', -1), Error, /nowMs/],
    ];
    for (const [call, type, message] of bad) {
      assert.throws(call, (e) => e instanceof type && message.test(e.message), String(call));
    }
    assert.deepEqual(limiter.rules(), []);
    assert.deepEqual(departures(limiter, ['https://www.example.com/', 'https://cdn.example.com/']), [2000, 3000]);
    assert.equal(limiter.stats('*.example.com', T).decisions, 4);
  });

  test('HostLimiter and SharedLimiter refuse groupBy site at construction, naming it', () => {
    assert.throws(() => new HostLimiter({ groupBy: 'site' }), {
      name: 'Error',
      message: 'invalid config field groupBy: a HostLimiter paces one host (group hosts by site with a Limiter)',
    });
    assert.equal(new HostLimiter({ groupBy: 'host', siteLimits: { ratePerSec: 1 } }).acquire(0), 0);
    assert.throws(() => new SharedLimiter({ store: memoryStore(), fleetSize: 2, groupBy: 'site' }), {
      name: 'Error',
      message:
        "invalid config field groupBy: 'site' is not supported by SharedLimiter (a store shared by several " +
        "processes keeps hosts, not sites): use groupBy 'host', or a Limiter",
    });
    assert.ok(new SharedLimiter({ store: memoryStore(), fleetSize: 2, groupBy: 'host' }));
  });

  test('what the list answers is untrusted: a throw, a non-string or an unrelated domain groups nothing', () => {
    try {
      setPublicSuffixList((name) => {
        if (name.startsWith('throws.')) throw new Error('boom');
        if (name.startsWith('object.')) return { toString: () => 'example.com' };
        if (name.startsWith('other.')) return 'example.com';
        return registrableDomain(name);
      });
      const limiter = bySite();
      const urls = ['https://www.example.com/', 'https://throws.example.com/', 'https://object.example.com/'];
      assert.deepEqual(departures(limiter, [...urls, 'https://other.example.org/', 'https://img.example.com/']), [
        0, 0, 0, 0, 1000,
      ]);
      assert.equal(limiter.stats('throws.example.com', T).site, null);
    } finally {
      setPublicSuffixList(registrableDomain);
    }
    assert.deepEqual(departures(bySite(), ['https://throws.example.com/', 'https://a.example.com/']), [0, 1000]);
  });
});

test('the bundled list answers every case of the conformance file as the core does', () => {
  const cases = readFileSync(new URL('../data/public-suffix-cases.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(' '));
  assert.equal(cases.length, 72);
  const limiter = bySite();
  for (const [host, domain] of cases) {
    const expected = domain === '-' ? null : domain;
    assert.equal(registrableDomain(host), expected, host);
    // through the module: a host's site is its registrable domain (a single label has none)
    limiter.acquire(`https://${host}/`, T);
    const site = expected !== null && host.includes('.') ? `*.${expected}` : null;
    assert.equal(limiter.stats(host, T).site, site, host);
  }
  // tldts's license heads the bundle
  const bundle = readFileSync(new URL('../../pkg/psl.js', import.meta.url), 'utf8');
  assert.match(bundle, /^\/\*! The Public Suffix List .* tldts 7\.6\.0 and tldts-core 7\.6\.0 .*MIT License:\n\n/);
  assert.match(bundle, /Copyright \(c\) 2017 Thomas Parisot, 2018 Rémi Berson\n\nPermission is hereby granted/);
});

describe('two hosts of one site, judged from the origin', () => {
  let origin;
  before(async () => {
    origin = await Origin.start();
    await origin.warm();
  });
  after(() => origin.close());

  /** GET `path` from the origin, as the host `name` (its name in the Host header: one origin serves both). */
  const get = (name, path) =>
    new Promise((resolve, reject) => {
      const headers = { host: `${name}:${origin.port}` };
      const req = http.get({ host: '127.0.0.1', port: origin.port, path, headers });
      req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode)));
      req.on('error', reject);
    });

  test("the origin sees the site's pace across both hosts, in the order reserved", async () => {
    // 10/s per host, the site 3/s: both hosts together never closer than the site's spacing
    const limiter = bySite({ ratePerSec: 10, siteLimits: { minIntervalSec: 0.3 } });
    const events = [];
    const calls = [];
    for (let i = 0; i < 3; i++) {
      for (const name of ['www.example.com', 'img.example.com']) {
        const url = `http://${name}:${origin.port}/${name.split('.')[0]}${i}`;
        const onDecision = (e) => events.push(e);
        calls.push(limiter.schedule(url, () => get(name, new URL(url).pathname), { onDecision }));
      }
    }
    assert.deepEqual(await Promise.all(calls), Array(6).fill(200));
    const hosts = origin.log.map((e) => e.host.split(':')[0]);
    assert.deepEqual(hosts, Array(3).fill(['www.example.com', 'img.example.com']).flat(), 'in the order reserved');
    const arrivals = origin.arrivals();
    assertSpacing(assert, arrivals, 300, TOL, 'site');
    assert.deepEqual(audit({ ratePerSec: 10, burstCapacity: 1, minIntervalSec: 0.3 }, arrivals, [], TOL), []);
    assert.deepEqual(events.map((e) => e.layer), ['none', ...Array(5).fill('site')]);
    assert.ok(arrivals.at(-1) - arrivals[0] >= 1500 - TOL, 'five spacings of the site');
  });

  test("siteLimits.maxConcurrency 1: the origin never has two requests of the site at once", async () => {
    const limiter = bySite({ ratePerSec: 50, siteLimits: { ratePerSec: 50, maxConcurrency: 1 } });
    const slow = (name, path) =>
      new Promise((resolve, reject) => {
        const headers = { host: `${name}:${origin.port}` };
        const req = http.get({ host: '127.0.0.1', port: origin.port, path, headers });
        // the answer is read 200 ms after it came: the request is in flight until then
        req.on('response', (res) => setTimeout(() => res.resume().on('end', () => resolve(res.statusCode)), 200));
        req.on('error', reject);
      });
    const from = origin.log.length;
    const calls = ['www.example.com', 'img.example.com', 'www.example.com', 'img.example.com'].map((name, i) => {
      const url = `http://${name}:${origin.port}/c${i}`;
      return limiter.schedule(url, () => slow(name, `/c${i}`));
    });
    assert.deepEqual(await Promise.all(calls), Array(4).fill(200));
    const arrivals = origin.log.slice(from).map((e) => e.t);
    assert.equal(arrivals.length, 4);
    // each went once the one before it had been read: one in flight at the site, whichever host
    assertSpacing(assert, arrivals, 200, TOL, 'one request of the site in flight');
    assert.equal(limiter.stats('*.example.com').inFlight, 0, 'every permit went back');
    limiter.free();
  });
});
