// Politeness groups at the gateway (CRAWL_GROUP_BY=site): every host of one site (its registrable domain, from the
// Public Suffix List) is decided by the site's one object, which paces the site as one beside each host's own
// limits. Judged from the origins' own access logs (real origins on 127.0.0.1, the real gateway in workerd under
// miniflare), with host names under `hostpace.test` and `elsewhere.test` reaching 127.0.0.1
// (tests/gateway/workers/named-hosts.mjs): by the list's default rule those are two sites, and every name under
// `hostpace.test` (`www.shop.hostpace.test` too) is in the one site `hostpace.test`.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { registrableDomain } from '../../worker/src/sites.js';
import { Origin, assertSpacing, clockMs, gaps, sleep } from '../js/helpers.mjs';
import { GATEWAY_TOL, root, startWorkerd } from './gateway.mjs';

const VICTIM = 'victim-token-61d0a2';
const ATTACKER = 'attacker-token-e47b93';
const ADMIN = 'admin-token-7c2e55';
const HOST_RATE = 5; // each host: 200 ms apart, burst 1
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: String(HOST_RATE),
  CRAWL_BURST_CAPACITY: '1',
};
const BY_SITE = { ...VARS, CRAWL_GROUP_BY: 'site', CRAWL_SITE_RATE_PER_SEC: '2.5' }; // the site: 400 ms apart

const bearer = (token) => ({ authorization: `Bearer ${token}` });

/** The calls of one token to the gateway at `base()`. */
function client(base, token) {
  const call = (path, init = {}) =>
    fetch(`${base()}${path}`, { ...init, headers: { ...bearer(token), ...(init.headers ?? {}) } });
  const post = async (path, body) => {
    const res = await call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
  };
  return {
    /** `GET /v1/fetch` of `url`: status, error code, layer and body text. */
    async get(url) {
      const res = await call(`/v1/fetch?url=${encodeURIComponent(url)}`);
      const layer = res.headers.get('hostpace-layer');
      return { status: res.status, code: res.headers.get('hostpace-error'), layer, text: await res.text() };
    },
    acquire: (url) => post('/v1/acquire', { url }),
    depart: (url, departureId) => post('/v1/depart', { url, departureId }),
    observe: (url, departureId, status, headers = {}) => post('/v1/observe', { url, departureId, status, headers }),
    cancel: (url, departureId) => post('/v1/cancel', { url, departureId }),
    async report(host) {
      const res = await call(`/v1/hosts/${encodeURIComponent(host)}`);
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
    async put(pattern, body) {
      const res = await call(`/v1/admin/hosts/${pattern}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
  };
}

/** Assert an answer is 200 (naming its body otherwise). */
function ok(answer, what) {
  assert.equal(answer.status, 200, `${what}: ${answer.text ?? JSON.stringify(answer.body)}`);
}

/** An origin named `name`: its URLs use the name, its requests arrive at 127.0.0.1. */
async function named(name, routes = {}) {
  const o = await Origin.start(routes);
  o.name = `${name}:${o.port}`;
  o.at = (path) => `http://${o.name}${path}`;
  return o;
}

/** Arrival times at `origins` since `from` (epoch ms), every path. */
const since = (from, ...origins) => origins.flatMap((o) => o.log.filter((e) => e.t >= from).map((e) => e.t));

/** `n` concurrent `/v1/fetch` of `o` by `who`, paths `${prefix}0`…: every answer. */
const crawl = (who, o, n, prefix = '/p') => Array.from({ length: n }, (_, i) => who.get(o.at(`${prefix}${i}`)));

test('the Worker\'s Public Suffix List (worker/src/sites.js, tldts) answers every case of the conformance file', () => {
  const lines = readFileSync(`${root}tests/data/public-suffix-cases.txt`, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  assert.equal(lines.length, 72);
  for (const line of lines) {
    const [host, expected] = line.split(' ');
    assert.equal(registrableDomain(host) ?? '-', expected, host);
  }
  // the sites of the tests' names, and anything that is no host name: no answer, never a throw
  assert.equal(registrableDomain('www.shop.hostpace.test'), 'hostpace.test');
  assert.equal(registrableDomain('www.elsewhere.test'), 'elsewhere.test');
  for (const odd of [undefined, null, 42, {}, '', 'test', '..']) assert.equal(registrableDomain(odd), undefined, String(odd));
});

describe('gateway: hosts grouped by site share one budget, decided by the site\'s object', () => {
  let gateway;
  const base = () => gateway.base;
  const victim = client(base, VICTIM);
  const attacker = client(base, ATTACKER);
  const origins = [];
  const origin = async (name, routes) => {
    const o = await named(name, routes);
    origins.push(o);
    return o;
  };

  before(async () => {
    gateway = await startWorkerd({
      script: 'tests/gateway/workers/named-hosts.mjs',
      vars: BY_SITE,
      token: VICTIM,
      otherTokens: [ATTACKER],
    });
  });
  after(async () => {
    await Promise.all(origins.map((o) => o.close()));
    await gateway?.dispose();
  });

  test('two hosts of one site are paced together, each with its own robots.txt; another site is not slowed', async () => {
    const www = await origin('www.hostpace.test', { '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' } });
    const img = await origin('img.hostpace.test', { '/robots.txt': { status: 404 } });
    const other = await origin('www.elsewhere.test', { '/robots.txt': { status: 404 } });
    const from = clockMs();
    const answers = await Promise.all([...crawl(victim, www, 4), ...crawl(victim, img, 4), ...crawl(victim, other, 4)]);
    answers.forEach((a, i) => ok(a, `request ${i}`));
    // every departure to the site (robots.txt of each host included) at the site's pace: 400 ms apart
    const site = since(from, www, img);
    assert.equal(site.length, 10, 'four requests and robots.txt at each host');
    assertSpacing(assert, site, 400, GATEWAY_TOL, 'the site hostpace.test');
    assert.ok(answers.slice(0, 8).some((a) => a.layer === 'site'), 'a wait set by the site says so');
    // the host of another site went at its own site's pace (every site is paced at CRAWL_SITE_RATE_PER_SEC),
    // beside the first site's departures, not after them: its 5 departures took 4 spacings, not 14
    const elsewhere = since(from, other);
    assert.equal(elsewhere.length, 5);
    assertSpacing(assert, elsewhere, 400, GATEWAY_TOL, 'www.elsewhere.test');
    const span = Math.max(...elsewhere) - Math.min(...elsewhere);
    assert.ok(span < 4 * 400 + 500, `www.elsewhere.test was slowed: 5 departures in ${span.toFixed(0)} ms`);

    // robots.txt stays each host's own inside the site's object
    const refused = await victim.get(www.at('/private/a'));
    assert.deepEqual([refused.status, refused.code], [403, 'disallowed_by_robots']);
    ok(await victim.get(img.at('/private/a')), 'img.hostpace.test allows what www disallows');
    assert.equal(www.log.filter((e) => e.path.startsWith('/private')).length, 0, 'nothing disallowed was sent');

    // each host reports its own state and robots.txt, and its site
    const [wwwReport, imgReport, otherReport] = await Promise.all([www, img, other].map((o) => victim.report(o.name)));
    assert.equal(wwwReport.body.robots.status, 'rules');
    assert.equal(imgReport.body.robots.status, 'allowed');
    assert.equal(wwwReport.body.site.site, '*.hostpace.test');
    assert.equal(imgReport.body.site.site, '*.hostpace.test');
    assert.equal(otherReport.body.site.site, '*.elsewhere.test');
    assert.ok(imgReport.body.site.stats.decisions >= 10, JSON.stringify(imgReport.body.site));
  });

  test('two tenants share the site\'s budget, and each reads, confirms and gives back only its own', async () => {
    const www = await origin('www.tenants.hostpace.test', { '/robots.txt': { status: 404 } });
    const img = await origin('img.tenants.hostpace.test', { '/robots.txt': { status: 404 } });
    ok(await attacker.get(www.at('/a0')), 'the attacker at www');
    const mine = await victim.acquire(img.at('/v0'));
    ok(mine, 'the victim reserves at img');
    const id = mine.body.departureId;
    // the victim's departure is the victim's at img: not the attacker's, at either host of the site
    for (const o of [www, img]) {
      for (const answer of [
        await attacker.depart(o.at('/v0'), id),
        await attacker.observe(o.at('/v0'), id, 429, { 'Retry-After': '60' }),
        await attacker.cancel(o.at('/v0'), id),
      ]) {
        assert.deepEqual([answer.status, answer.code], [403, 'not_your_departure'], o.name);
      }
    }
    // nor at the host where the attacker does hold departures: a departure is issued for one host
    const own = await attacker.acquire(www.at('/a1'));
    ok(own, 'the attacker reserves at www');
    assert.deepEqual((await victim.depart(www.at('/a1'), own.body.departureId)).code, 'not_your_departure');
    assert.deepEqual((await attacker.report(img.name)).code, 'unknown_host', 'a host the attacker never used');
    ok(await attacker.cancel(www.at('/a1'), own.body.departureId), 'the attacker gives its own back');

    // the victim's departure is intact: confirmed, sent by the victim itself, reported
    const departed = await victim.depart(img.at('/v0'), id);
    ok(departed, 'the victim confirms');
    assert.equal(departed.body.waitMs, 0);
    await (await fetch(`http://127.0.0.1:${img.port}/v0`)).text();
    ok(await victim.observe(img.at('/v0'), id, 200), 'the victim reports');

    // both crawl at once: every departure to the site, both tenants', at the site's pace
    const from = clockMs();
    const answers = await Promise.all([...crawl(attacker, www, 3, '/a'), ...crawl(victim, img, 3, '/v')]);
    answers.forEach((a, i) => ok(a, `request ${i}`));
    assertSpacing(assert, since(from, www, img), 400, GATEWAY_TOL, 'the site, both tenants');

    // each reads only its own departures; the site's state is the site's
    ok(await attacker.get(img.at('/a-img')), 'the attacker uses img once');
    const seen = await attacker.report(img.name);
    ok(seen, 'the attacker reads img');
    assert.deepEqual(seen.body.departures.map((d) => d.status), [200], 'only the attacker\'s own departure');
    const victims = await victim.report(img.name);
    const requests = victims.body.departures.filter((d) => d.purpose === 'request');
    assert.deepEqual(requests.map((d) => d.status), [200, 200, 200, 200], JSON.stringify(victims.body.departures));
    assert.equal(victims.body.site.site, '*.hostpace.test');
  });

  test('a token\'s bound spans the site: reserving at many of its hosts holds another token back by the bound only', async () => {
    // one origin answers the attacker's four names, another the victim's host; each host's robots.txt is known
    // before the burst, so that reserving costs the attacker nothing but asking
    const theirs = await origin('m.bound.hostpace.test', { '/robots.txt': { status: 404 } });
    const names = [0, 1, 2, 3].map((i) => `m${i}.bound.hostpace.test:${theirs.port}`);
    const www = await origin('www.bound.hostpace.test', { '/robots.txt': { status: 404 } });
    ok(await victim.get(www.at('/warm')), 'the victim at www');
    const victimAsked = clockMs();
    for (const name of names) ok(await attacker.get(`http://${name}/warm`), name);
    // the victim no longer wants the site (it asked over 5 s ago), whose last slot has passed: the attacker is
    // alone, at its full bound
    await sleep(Math.max(2 * 400, victimAsked + 5_000 + 200 - clockMs()));
    // the attacker asks for four departures at each of its four hosts at once
    const asked = clockMs();
    const urls = names.flatMap((name) => [0, 1, 2, 3].map((n) => `http://${name}/r${n}`));
    const answers = await Promise.all(urls.map(async (url) => ({ url, ...(await attacker.acquire(url)) })));
    const held = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    assert.equal(held.length, 4, `the bound is the site's: ${answers.map((a) => a.status)}`);
    assert.deepEqual([...new Set(refused.map((a) => `${a.status} ${a.code}`))], ['429 reservation_limit']);
    assert.match(refused[0].body.error.message, /site's hosts/);
    // the victim's request goes after those four of the site's slots, not after sixteen
    const from = clockMs();
    ok(await victim.get(www.at('/after')), 'the victim');
    const arrived = www.log.find((e) => e.path === '/after').t;
    assert.ok(
      arrived - asked <= 4 * 400 + GATEWAY_TOL,
      `the victim's request arrived ${(arrived - asked).toFixed(0)} ms after the attacker's burst (asked at +${(from - asked).toFixed(0)} ms)`,
    );
    await Promise.all(held.map((a) => attacker.cancel(a.url, a.body.departureId)));
  });
});

test('an operators\' rule of *.shop.hostpace.test reaches the site\'s object: its hosts are paced by it, and a rule of the site paces them together', async () => {
  const gateway = await startWorkerd({
    script: 'tests/gateway/workers/named-hosts.mjs',
    // the site fast (50 ms), so that what paces the hosts is the rule
    vars: { ...VARS, CRAWL_GROUP_BY: 'site', CRAWL_SITE_RATE_PER_SEC: '20', CRAWL_ROBOTS_TTL_SEC: '0' },
    token: VICTIM,
    adminTokens: [`ops:${ADMIN}`],
  });
  const tenant = client(() => gateway.base, VICTIM);
  const admin = client(() => gateway.base, ADMIN);
  const [www, img, cdn] = await Promise.all([
    named('www.shop.hostpace.test'),
    named('img.shop.hostpace.test'),
    named('cdn.hostpace.test'),
  ]);
  try {
    ok(await tenant.get(www.at('/before')), 'the site\'s object loaded before the rule');
    const set = await admin.put('*.shop.hostpace.test', { minIntervalSec: 0.6 });
    ok(set, 'the rule of the hosts under shop');
    assert.equal(set.body.hosts, 1, 'pushed to the one object of the site hostpace.test');
    let from = clockMs();
    const answers = await Promise.all([...crawl(tenant, www, 4), ...crawl(tenant, img, 4), ...crawl(tenant, cdn, 4)]);
    answers.forEach((a, i) => ok(a, `request ${i}`));
    assertSpacing(assert, since(from, www), 600, GATEWAY_TOL, 'www.shop.hostpace.test');
    assertSpacing(assert, since(from, img), 600, GATEWAY_TOL, 'img.shop.hostpace.test');
    const free = since(from, cdn);
    const span = Math.max(...free) - Math.min(...free);
    assert.ok(span < 1300, `cdn.hostpace.test, outside the rule, kept 5/s: 4 requests in ${span.toFixed(0)} ms`);
    const together = gaps(since(from, www, img));
    assert.ok(Math.min(...together) < 400, `the rule paces each host, not the two together: ${together.join(', ')}`);

    // a rule of the site itself paces every host of it as one
    const site = await admin.put('*.hostpace.test', { minIntervalSec: 0.5 });
    ok(site, 'the rule of the site');
    assert.equal(site.body.hosts, 1);
    from = clockMs();
    (await Promise.all([...crawl(tenant, www, 3, '/s'), ...crawl(tenant, img, 3, '/s')])).forEach((a) => ok(a, 'site'));
    assertSpacing(assert, since(from, www, img), 500, GATEWAY_TOL, 'the two hosts of shop together');
    assertSpacing(assert, since(from, www), 600, GATEWAY_TOL, 'www.shop.hostpace.test');
  } finally {
    await Promise.all([www, img, cdn].map((o) => o.close()));
    await gateway.dispose();
  }
});

test('by default each host is paced on its own: two hosts of one site go side by side', async () => {
  const gateway = await startWorkerd({ script: 'tests/gateway/workers/named-hosts.mjs', vars: { ...VARS, CRAWL_ROBOTS_TTL_SEC: '0' } });
  const tenant = client(() => gateway.base, 'test-token-7f3a9c');
  const [www, img] = await Promise.all([named('www.default.hostpace.test'), named('img.default.hostpace.test')]);
  try {
    const from = clockMs();
    (await Promise.all([...crawl(tenant, www, 4), ...crawl(tenant, img, 4)])).forEach((a) => ok(a, 'per host'));
    for (const o of [www, img]) assertSpacing(assert, since(from, o), 1000 / HOST_RATE, GATEWAY_TOL, o.name);
    const both = since(from, www, img);
    const span = Math.max(...both) - Math.min(...both);
    assert.ok(span < 1300, `the two hosts went side by side: 8 requests in ${span.toFixed(0)} ms`);
    const report = await tenant.report(www.name);
    ok(report, 'report');
    assert.equal(report.body.site, undefined, 'no site');
  } finally {
    await Promise.all([www, img].map((o) => o.close()));
    await gateway.dispose();
  }
});

test('CRAWL_SITE_MAX_CONCURRENCY=1: one request in flight at the site, whichever of its hosts it goes to', async () => {
  const vars = {
    ...VARS,
    CRAWL_ROBOTS_TTL_SEC: '0',
    CRAWL_RATE_PER_SEC: '50',
    CRAWL_GROUP_BY: 'site',
    CRAWL_SITE_RATE_PER_SEC: '50',
    CRAWL_SITE_MAX_CONCURRENCY: '1',
  };
  const gateway = await startWorkerd({ script: 'tests/gateway/workers/named-hosts.mjs', vars });
  const tenant = client(() => gateway.base, 'test-token-7f3a9c');
  // one slow origin behind both names: what it logs is every request to the site
  const slow = { '*': { status: 200, body: 'slow', delayMs: 300 } };
  const www = await named('www.permits.hostpace.test', slow);
  const img = { name: `img.permits.hostpace.test:${www.port}`, at: (path) => `http://img.permits.hostpace.test:${www.port}${path}` };
  try {
    const t0 = clockMs();
    const answers = await Promise.all([...crawl(tenant, www, 2, '/w'), ...crawl(tenant, img, 2, '/i')]);
    answers.forEach((a, i) => ok(a, `request ${i}`));
    // (the names reach the origin as 127.0.0.1: the paths tell the hosts apart)
    assert.deepEqual(www.log.map((e) => e.path).sort(), ['/i0', '/i1', '/w0', '/w1']);
    // each went only once the response before it (300 ms) was passed on: never two in flight at the site
    assertSpacing(assert, www.log.map((e) => e.t), 300, GATEWAY_TOL, 'one request in flight at the site');
    const elapsed = clockMs() - t0;
    assert.ok(elapsed < 4000, `took ${elapsed.toFixed(0)} ms: a held caller was woken when the permit went back`);
    const report = await tenant.report(img.name);
    ok(report, 'report');
    assert.equal(report.body.site.stats.inFlight, 0, 'every permit of the site went back');
  } finally {
    await www.close();
    await gateway.dispose();
  }
});

test('site limits the core refuses are configuration problems naming their variable', async () => {
  const gateway = await startWorkerd({
    vars: { CRAWL_GROUP_BY: 'site', CRAWL_SITE_RATE_PER_SEC: '0', CRAWL_SITE_BURST_CAPACITY: '0.5' },
  });
  try {
    const health = await fetch(`${gateway.base}/healthz`);
    assert.equal(health.status, 503);
    const { problems } = await health.json();
    assert.equal(problems.length, 2, JSON.stringify(problems));
    assert.match(problems[0], /^CRAWL_SITE_RATE_PER_SEC: invalid siteLimits\.ratePerSec: 0/);
    assert.match(problems[1], /^CRAWL_SITE_BURST_CAPACITY: .*siteLimits\.burstCapacity/);
  } finally {
    await gateway.dispose();
  }
});

test('a site\'s object past 1,000 hosts forgets those used least recently: their robots.txt is fetched again, a busy host\'s is not', async () => {
  // fast enough that 1,100 hosts take seconds: each one's robots.txt and one page
  const vars = { ...VARS, CRAWL_RATE_PER_SEC: '1000', CRAWL_GROUP_BY: 'site', CRAWL_SITE_RATE_PER_SEC: '1000' };
  const gateway = await startWorkerd({ script: 'tests/gateway/workers/named-hosts.mjs', vars, otherTokens: [VICTIM] });
  const attacker = client(() => gateway.base, 'test-token-7f3a9c');
  const victim = client(() => gateway.base, VICTIM);
  // one origin behind every name (robots.txt allows all); the paths tell the hosts apart
  const o = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nAllow: /\n' } });
  const url = (name, path) => `http://${name}.forget.hostpace.test:${o.port}${path}`;
  const robots = () => o.log.filter((e) => e.path === '/robots.txt').length;
  try {
    ok(await victim.get(url('www', '/v0')), 'the victim');
    // the attacker names 1,100 other hosts of the site, four at a time, while the victim goes on crawling its own
    const names = Array.from({ length: 1_100 }, (_, i) => `m${i}`);
    for (let i = 0; i < names.length; i += 4) {
      const answers = await Promise.all(names.slice(i, i + 4).map((n) => attacker.get(url(n, `/${n}`))));
      answers.forEach((a, j) => ok(a, names[i + j]));
      if (i % 100 === 0) ok(await victim.get(url('www', `/v-${i}`)), 'the victim meanwhile');
    }
    assert.equal(robots(), 1 + 1_100, 'each host\'s robots.txt once');
    // the host named first was forgotten (its robots.txt with it): asked again, it starts with robots.txt
    ok(await attacker.get(url('m0', '/m0-again')), 'm0 again');
    assert.equal(robots(), 1 + 1_100 + 1, 'm0\'s robots.txt again');
    // the victim's host, used all along, was kept: no robots.txt before its next request
    ok(await victim.get(url('www', '/v1')), 'the victim again');
    assert.equal(robots(), 1 + 1_100 + 1, 'the victim\'s host kept its robots.txt');
    assert.deepEqual(o.log.slice(-1).map((e) => e.path), ['/v1']);
  } finally {
    await o.close();
    await gateway.dispose();
  }
});
