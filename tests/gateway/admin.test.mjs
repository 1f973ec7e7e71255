// Operators' rules at the gateway (GATEWAY_ADMIN_TOKEN, /v1/admin/hosts): a rule slows or speeds a host for every
// tenant at once, a block refuses everything there (robots.txt included, a request already waiting too), rules
// survive a restart, a site's rule reaches every host under it, tenants can neither read nor change rules, and bad
// input changes nothing. Every pace and every "nothing was sent" is judged from the origins' own access logs (real
// origins on 127.0.0.1, the real gateway in workerd: wrangler dev, or miniflare for named hosts).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { audit } from '../../pkg/node.js';
import { Origin, assertSpacing, clockMs, originPool, sleep, until, within } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway, startWorkerd, tempDir } from './gateway.mjs';

const TENANT_A = 'tenant-a-token-5d1c';
const TENANT_B = 'tenant-b-token-8e2f';
const ADMIN = 'admin-token-3b9a47';
const ADMIN_LABEL = 'ops';
const RATE = 5; // the gateway's pace: 200 ms apart, burst 1
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: String(RATE),
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_MAX_WAIT_SEC: '30',
};

const bearer = (token) => (token === null ? {} : { authorization: `Bearer ${token}` });

/** The calls of one token (a tenant's or the admin's) to a gateway at `base()`. */
function client(base, token) {
  const call = (path, init = {}) =>
    fetch(`${base()}${path}`, { ...init, headers: { ...bearer(token), ...(init.headers ?? {}) } });
  return {
    call,
    /** `GET /v1/fetch` of `url`: status, error code and body text. */
    async get(url) {
      const res = await call(`/v1/fetch?url=${encodeURIComponent(url)}`);
      return { status: res.status, code: res.headers.get('hostpace-error'), text: await res.text() };
    },
    async acquire(url) {
      const res = await call('/v1/acquire', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
    /** `PUT /v1/admin/hosts/{pattern}` with `body` (an object, or a string sent as it is). */
    async put(pattern, body) {
      const res = await call(`/v1/admin/hosts/${pattern}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
    async remove(pattern) {
      const res = await call(`/v1/admin/hosts/${pattern}`, { method: 'DELETE' });
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
    async list() {
      const res = await call('/v1/admin/hosts');
      return { status: res.status, code: res.headers.get('hostpace-error'), body: await res.json() };
    },
    async report(host) {
      return (await call(`/v1/hosts/${encodeURIComponent(host)}`)).json();
    },
  };
}

/** Assert an answer is 200 (naming the body otherwise). */
function ok(answer, what) {
  assert.equal(answer.status, 200, `${what}: ${answer.text ?? JSON.stringify(answer.body)}`);
}

/** The rule-change lines in a gateway's output. */
function ruleLines(output) {
  return output
    .map((line) => {
      const at = line.indexOf('{');
      if (at < 0 || !line.includes('"event":"rule"')) return undefined;
      try {
        return JSON.parse(line.slice(at));
      } catch (_) {
        return undefined;
      }
    })
    .filter(Boolean);
}

describe('gateway: operators\' rules reach every tenant at once, survive a restart, and only admins set them', () => {
  const persistTo = tempDir();
  let gateway;
  const base = () => gateway.base;
  const a = client(base, TENANT_A);
  const b = client(base, TENANT_B);
  const admin = client(base, ADMIN);
  const origins = originPool();
  let slow;
  let fast;
  let blocked;

  const start = () =>
    Gateway.start({ vars: VARS, persistTo, token: TENANT_A, otherTokens: [TENANT_B], adminTokens: [`${ADMIN_LABEL}:${ADMIN}`] });

  before(async () => {
    gateway = await start();
    [slow, fast, blocked] = await Promise.all([origins.start(), origins.start(), origins.start()]);
  });
  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test('tenants\' tokens cannot read or change rules (403), no token or a wrong one is 401, an admin token is no tenant\'s', async () => {
    ok(await admin.put('guarded.example', { ratePerSec: 1, note: 'operators only' }), 'admin sets a rule');
    const before = await admin.list();
    ok(before, 'admin lists');
    for (const tenant of [a, b]) {
      for (const answer of [
        await tenant.list(),
        await tenant.put('guarded.example', { blocked: { reason: 'mine now' } }),
        await tenant.put('other.example', { ratePerSec: 100 }),
        await tenant.remove('guarded.example'),
      ]) {
        assert.deepEqual([answer.status, answer.code], [403, 'admin_only']);
        assert.ok(!JSON.stringify(answer.body).includes('operators only'), 'the refusal shows no rule');
      }
    }
    for (const stranger of [client(base, null), client(base, 'not-a-token'), client(base, `${ADMIN_LABEL}:${ADMIN}`)]) {
      const answer = await stranger.put('guarded.example', { ratePerSec: 100 });
      assert.deepEqual([answer.status, answer.code], [401, 'unauthorized']);
      assert.equal((await stranger.list()).status, 401);
    }
    // the admin token is no tenant's: the tenants' routes refuse it
    const asAdmin = await admin.get(slow.url('/never'));
    assert.deepEqual([asAdmin.status, asAdmin.code], [401, 'unauthorized']);
    assert.deepEqual((await admin.list()).body, before.body, 'nothing changed');
    ok(await admin.remove('guarded.example'), 'admin removes it');
    assert.equal(slow.log.length, 0);
  });

  test('bad input is 400 naming what is wrong (413 past 64 KiB), and changes nothing', async () => {
    ok(await admin.put('kept.example', { minIntervalSec: 2 }), 'a rule to keep');
    const before = (await admin.list()).body;
    const cases = [
      ['kept.example', '{"ratePerSec": ', 400, 'invalid_json', 'invalid JSON body'],
      ['kept.example', '[1]', 400, 'invalid_json', 'the rule must be a JSON object'],
      ['kept.example', { ratePerSecond: 1 }, 400, 'invalid_json', 'unknown field `ratePerSecond`'],
      ['kept.example', { blocked: { why: 'x' } }, 400, 'invalid_json', 'unknown field `why`'],
      ['kept.example', { ratePerSec: -1 }, 400, 'invalid_rule', 'ratePerSec'],
      ['kept.example', { burstCapacity: 0.5 }, 400, 'invalid_rule', 'burstCapacity'],
      ['kept.example', { quota: { limit: 0, windowSec: 60 } }, 400, 'invalid_rule', 'quota.limit'],
      ['kept.example', { blocked: { reason: '' } }, 400, 'invalid_rule', 'blocked.reason must say why'],
      ['kept.example', { note: 'n'.repeat(1001) }, 400, 'invalid_rule', 'note is longer than 1000 bytes'],
      ['*.com', { ratePerSec: 1 }, 400, 'invalid_rule', 'a site is a domain under a top-level one'],
      ['*.kept.example:8080', { ratePerSec: 1 }, 400, 'invalid_rule', 'a site is a domain, with no port'],
      ['exa%20mple.com', { ratePerSec: 1 }, 400, 'invalid_rule', 'invalid rule "exa mple.com"'],
      ['%ZZ', { ratePerSec: 1 }, 400, 'invalid_rule', 'percent-encoding'],
      ['kept.example', { note: 'x'.repeat(70 * 1024) }, 413, 'body_too_large', 'larger than 65536 bytes'],
    ];
    for (const [pattern, body, status, code, says] of cases) {
      const answer = await admin.put(pattern, body);
      const what = `PUT ${pattern} ${typeof body === 'string' ? body : JSON.stringify(body).slice(0, 80)}`;
      assert.deepEqual([answer.status, answer.code], [status, code], `${what}: ${JSON.stringify(answer.body)}`);
      assert.ok(answer.body.error.message.includes(says), `${what}: ${answer.body.error.message}`);
    }
    const missing = await admin.remove('never-set.example');
    assert.deepEqual([missing.status, missing.code], [404, 'unknown_rule']);
    const badDelete = await admin.remove('*.com');
    assert.deepEqual([badDelete.status, badDelete.code], [400, 'invalid_rule']);
    assert.deepEqual((await admin.list()).body, before, 'nothing changed: the rules nor their revision');
    ok(await admin.remove('kept.example'), 'removed');
  });

  test('a rule slows a host for two tenants at once; another speeds one up', async () => {
    // both tenants use both hosts first, at the gateway's pace (robots.txt fetched then)
    for (const o of [slow, fast]) for (const t of [a, b]) ok(await t.get(o.url('/before')), 'before the rules');
    const set = await admin.put(slow.host, { ratePerSec: 1.25, note: 'asked by its owner' });
    ok(set, 'slow rule');
    assert.equal(set.body.rule.pattern, slow.host);
    assert.equal(set.body.hosts, 1, 'the host\'s object applied it before the answer');
    ok(await admin.put(fast.host, { ratePerSec: 40, burstCapacity: 1 }), 'fast rule');
    const from = clockMs();
    const crawl = (t, o, tag, n) => Array.from({ length: n }, (_, i) => t.get(o.url(`/${tag}${i}`)));
    const answers = await Promise.all([
      ...crawl(a, slow, 'a', 3),
      ...crawl(b, slow, 'b', 3),
      ...crawl(a, fast, 'a', 5),
      ...crawl(b, fast, 'b', 5),
    ]);
    answers.forEach((answer) => ok(answer, 'under the rules'));
    const slowTimes = slow.log.filter((e) => e.t >= from).map((e) => e.t);
    const fastTimes = fast.log.filter((e) => e.t >= from).map((e) => e.t);
    assert.deepEqual(
      slow.log.filter((e) => e.t >= from).map((e) => e.path[1]).sort(),
      ['a', 'a', 'a', 'b', 'b', 'b'],
      'both tenants crawled the slowed host',
    );
    // slowed: 800 ms apart for both tenants together (the gateway's pace is 200 ms)
    assertSpacing(assert, slowTimes, 800, GATEWAY_TOL, 'the slowed host');
    assert.deepEqual(audit({ ratePerSec: 1.25, burstCapacity: 1 }, slowTimes, [], GATEWAY_TOL), []);
    // sped up: 10 requests at 40/s (225 ms from first to last), never faster than that; at the gateway's 5/s they
    // would span 1800 ms at least
    assert.equal(fastTimes.length, 10);
    assert.deepEqual(audit({ ratePerSec: 40, burstCapacity: 1 }, fastTimes, [], GATEWAY_TOL), []);
    const span = Math.max(...fastTimes) - Math.min(...fastTimes);
    assert.ok(span < 1400, `the sped-up host took ${span.toFixed(0)} ms for 10 requests (5/s: 1800 ms or more)`);
    // each tenant's report shows the host's pace in force
    for (const t of [a, b]) {
      assert.equal((await t.report(slow.host)).policy.ratePerSec, 1.25);
      assert.equal((await t.report(fast.host)).policy.ratePerSec, 40);
    }
  });

  test('a blocked host receives nothing, robots.txt included, every tenant is told why, and a waiting request too', async () => {
    const reason = 'the site owner asked us to stop (ticket 42)';
    const set = await admin.put(blocked.host, { blocked: { reason }, note: 'until further notice' });
    ok(set, 'block');
    assert.equal(set.body.hosts, 0, 'no object of that host has loaded yet');
    const fetched = await a.get(blocked.url('/page'));
    assert.deepEqual([fetched.status, fetched.code], [403, 'host_blocked']);
    assert.ok(JSON.parse(fetched.text).error.message.includes(reason), fetched.text);
    const acquired = await b.acquire(blocked.url('/page'));
    assert.deepEqual([acquired.status, acquired.code], [403, 'host_blocked']);
    assert.ok(acquired.body.error.message.includes(reason));
    assert.ok((await b.get(blocked.url('/other'))).text.includes(reason));
    await sleep(300);
    assert.deepEqual(blocked.log, [], 'nothing reached the blocked host, not even /robots.txt');

    // a request waiting in the host's object for its turn when the block lands is refused then, not sent later
    const waiting = await origins.start();
    ok(await a.get(waiting.url('/first')), 'first request');
    ok(await admin.put(waiting.host, { minIntervalSec: 4 }), 'the host slowed: the next request waits 4 s');
    const pending = b.get(waiting.url('/second')).then((answer) => ({ ...answer, at: clockMs() }));
    await sleep(800); // the second request waits in the object for ~3 s more
    const blockedAt = clockMs();
    const block = await admin.put(waiting.host, { blocked: { reason: 'stop now' } });
    ok(block, 'block the slow host');
    assert.equal(block.body.hosts, 1);
    const refused = await within(pending, 10_000, 'the waiting request never answered');
    assert.deepEqual([refused.status, refused.code], [403, 'host_blocked'], refused.text);
    assert.ok(refused.text.includes('stop now'));
    assert.ok(refused.at - blockedAt < 1500, `refused ${(refused.at - blockedAt).toFixed(0)} ms after the block`);
    await sleep(4000); // past the instant it had been given
    assert.deepEqual(
      waiting.log.map((e) => e.path),
      ['/robots.txt', '/first'],
      'the waiting request was never sent',
    );
    ok(await admin.remove(waiting.host), 'unblock the slow host');
  });

  test('rules survive a restart, and DELETE lifts a block', async () => {
    const listed = (await admin.list()).body;
    await gateway.stop();
    gateway = await start();
    assert.deepEqual((await admin.list()).body, listed, 'the rules object kept every rule');
    const patterns = listed.rules.map((r) => r.pattern);
    for (const o of [slow, fast, blocked]) assert.ok(patterns.includes(o.host), `${o.host} in ${patterns}`);
    // the block holds after the restart, for both tenants
    for (const t of [a, b]) {
      const answer = await t.get(blocked.url('/after-restart'));
      assert.deepEqual([answer.status, answer.code], [403, 'host_blocked']);
    }
    // the slowed host keeps its pace for both tenants after the restart
    const from = clockMs();
    const answers = await Promise.all([a, b, a, b].map((t, i) => t.get(slow.url(`/restarted${i}`))));
    answers.forEach((answer) => ok(answer, 'after the restart'));
    const times = slow.log.filter((e) => e.t >= from).map((e) => e.t);
    assert.equal(times.length, 4);
    assertSpacing(assert, times, 800, GATEWAY_TOL, 'the slowed host after the restart');
    for (const t of [a, b]) assert.equal((await t.report(slow.host)).policy.ratePerSec, 1.25);
    // lifted: robots.txt first, then the request
    const lifted = await admin.remove(blocked.host);
    ok(lifted, 'unblock');
    assert.equal(lifted.body.previous.blocked.reason, 'the site owner asked us to stop (ticket 42)');
    ok(await a.get(blocked.url('/lifted')), 'after the block is lifted');
    ok(await b.get(blocked.url('/lifted-b')), 'after the block is lifted');
    assert.deepEqual(blocked.log.map((e) => e.path), ['/robots.txt', '/lifted', '/lifted-b']);
    assert.ok(!(await admin.list()).body.rules.some((r) => r.pattern === blocked.host));
  });

  test('every change writes one log line: what, who (the admin token\'s label, never the token) and when', async () => {
    await until(() => ruleLines(gateway.output).length > 0, { withinMs: 5000, message: 'no rule line' });
    // the gateway restarted: its output since holds the restart test's one change (the block lifted)
    const lines = ruleLines(gateway.output);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const [line] = lines;
    assert.deepEqual(
      [line.action, line.pattern, line.rule, line.by, line.hosts],
      ['remove', blocked.host, null, ADMIN_LABEL, 1],
    );
    assert.ok(Math.abs(Date.parse(line.at) - line.atMs) < 1 && Math.abs(line.atMs - Date.now()) < 120_000, line.at);
    const set = await admin.put('logged.example', { ratePerSec: 0.5, note: 'logged' });
    ok(set, 'a change to log');
    await until(() => ruleLines(gateway.output).length === 2, { withinMs: 5000, message: 'no line for the change' });
    const added = ruleLines(gateway.output)[1];
    assert.deepEqual(
      [added.action, added.pattern, added.rule, added.by, added.revision],
      ['set', 'logged.example', { ratePerSec: 0.5, note: 'logged' }, ADMIN_LABEL, set.body.revision],
    );
    assert.ok(!gateway.output.some((l) => l.includes(ADMIN)), 'the admin token is never logged');
  });
});

test('a site\'s rule reaches every host under it, those loaded before and after; a host outside keeps the gateway\'s pace', async () => {
  // names under hostpace.test reach 127.0.0.1 (tests/gateway/workers/named-hosts.mjs); the gateway sees the names
  const logs = [];
  const gateway = await startWorkerd({
    script: 'tests/gateway/workers/named-hosts.mjs',
    vars: { ...VARS, CRAWL_ROBOTS_TTL_SEC: '0' },
    token: TENANT_A,
    otherTokens: [TENANT_B],
    adminTokens: [`${ADMIN_LABEL}:${ADMIN}`],
    logs,
  });
  const origins = await Promise.all([1, 2, 3, 4].map(() => Origin.start({})));
  const [www, img, apex, outside] = origins;
  const url = (o, name, path) => `http://${name}:${o.port}${path}`;
  const names = new Map([
    [www, 'www.shop.hostpace.test'],
    [img, 'img.eu.shop.hostpace.test'],
    [apex, 'shop.hostpace.test'],
    [outside, 'shop.hostpace.test.other.hostpace.test'],
  ]);
  const a = client(() => gateway.base, TENANT_A);
  const b = client(() => gateway.base, TENANT_B);
  const admin = client(() => gateway.base, ADMIN);
  try {
    // www and the outside host are loaded before the rule; img and the apex only after it
    ok(await a.get(url(www, names.get(www), '/before')), 'www before');
    ok(await b.get(url(outside, names.get(outside), '/before')), 'outside before');
    const set = await admin.put('*.shop.hostpace.test', { minIntervalSec: 0.6 });
    ok(set, 'site rule');
    assert.equal(set.body.hosts, 1, 'pushed to the one loaded host under the site');
    const from = clockMs();
    const crawl = (o) => Array.from({ length: 4 }, (_, i) => (i % 2 ? b : a).get(url(o, names.get(o), `/p${i}`)));
    (await Promise.all(origins.flatMap(crawl))).forEach((answer) => ok(answer, 'under the site rule'));
    for (const o of [www, img, apex]) {
      const times = o.log.filter((e) => e.t >= from).map((e) => e.t);
      assert.equal(times.length, 4);
      assertSpacing(assert, times, 600, GATEWAY_TOL, names.get(o));
    }
    const outsideTimes = outside.log.filter((e) => e.t >= from).map((e) => e.t);
    const span = Math.max(...outsideTimes) - Math.min(...outsideTimes);
    assert.ok(span < 1500, `the host outside the site kept 5/s: 4 requests in ${span.toFixed(0)} ms`);
    // a block of the site: every host under it refuses, the one outside does not
    ok(await admin.put('*.shop.hostpace.test', { blocked: { reason: 'the whole shop opted out' } }), 'site block');
    const before = origins.map((o) => o.log.length);
    for (const o of [www, img, apex]) {
      const answer = await b.get(url(o, names.get(o), '/blocked'));
      assert.deepEqual([answer.status, answer.code], [403, 'host_blocked'], names.get(o));
      assert.ok(answer.text.includes('the whole shop opted out'));
    }
    ok(await a.get(url(outside, names.get(outside), '/not-blocked')), 'outside the site');
    // a host rule is more precise than the site's: it lifts the block for its host alone
    ok(await admin.put(names.get(img), { note: 'this one may be crawled' }), 'host exception');
    ok(await a.get(url(img, names.get(img), '/exception')), 'the exception');
    assert.deepEqual(
      origins.map((o, i) => o.log.slice(before[i]).map((e) => e.path)),
      [[], ['/exception'], [], ['/not-blocked']],
    );
    const lines = logs.map((l) => l.message).filter((m) => typeof m === 'string' && m.includes('"event":"rule"'));
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => l.includes(`"by":"${ADMIN_LABEL}"`) && !l.includes(ADMIN)), lines.join('\n'));
  } finally {
    await Promise.all(origins.map((o) => o.close()));
    await gateway.dispose();
  }
});
