// The edge fetch gateway end to end: the real Worker in workerd (wrangler dev, tests/gateway/gateway.mjs), real
// HTTP origins on 127.0.0.1 that keep their own access logs (tests/js/helpers.mjs), judged from the origin's side
// with the core's `audit` (from the npm package) and spacing checks.
//
// Run: scripts/build-worker.sh && npm run build:pkg && node --test --test-concurrency=1 tests/gateway/
// Timing checks allow GATEWAY_TOL ms (gateway.mjs says why; HOSTPACE_TEST_TOLERANCE_MS raises it further).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { audit } from '../../pkg/node.js';
import { Origin, assertSpacing, clockMs, gaps, httpDate, originPool, sleep, until, within } from '../js/helpers.mjs';
import { GATEWAY_TOL, Gateway } from './gateway.mjs';

const RATE = 5; // requests per second per host in the main gateway (burst capacity 1: 200 ms apart)
const MAIN_VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: String(RATE),
  CRAWL_BURST_CAPACITY: '1',
  CRAWL_MAX_RETRIES: '3',
  CRAWL_MAX_BODY_BYTES: String(1024 * 1024),
};
const UA = 'hostpace-gateway/0.1 (+https://example.invalid/hostpace)';
const OTHER_TOKEN = 'other-token-5d08c2'; // a second tenant of the main gateway

async function expectError(res, status, code, what) {
  assert.equal(res.status, status, `${what}: status`);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${what}: JSON content type`);
  const body = await res.json();
  assert.equal(body.error?.code, code, `${what}: code (${JSON.stringify(body)})`);
  assert.equal(res.headers.get('hostpace-error'), code, `${what}: the gateway's own refusal, marked with its code`);
  assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0, `${what}: a message`);
  return body.error.message;
}

describe('gateway: pacing, retries, robots.txt, nowait (wrangler dev, real origins)', () => {
  let gateway;
  const origins = originPool();
  const origin = origins.start;
  before(async () => {
    gateway = await Gateway.start({ vars: MAIN_VARS, otherTokens: [OTHER_TOKEN] });
  });
  after(async () => {
    await gateway?.stop();
    await origins.closeAll();
  });

  test("smoke test: 429 + Retry-After: 3 once, then 200 → 200 after 3–5 s, exactly one retry", async () => {
    const o = await origin({ '/page': [{ status: 429, headers: { 'Retry-After': '3' } }, { status: 200, body: 'ok' }] });
    const t0 = clockMs();
    const res = await gateway.fetchVia(o.url('/page'));
    const elapsed = clockMs() - t0;
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
    assert.equal(res.headers.get('hostpace-attempts'), '2');
    assert.equal(res.headers.get('hostpace-layer'), 'cooldown');
    assert.ok(elapsed >= 3000 - GATEWAY_TOL && elapsed <= 5000, `answered after ${elapsed.toFixed(0)} ms`);
    const times = o.arrivals('/page');
    assert.equal(times.length, 2, 'exactly one retry reached the origin');
    assertSpacing(assert, times, 3000, GATEWAY_TOL, 'the retry after Retry-After: 3');
  });

  test('the same with an HTTP-date Retry-After (resolved against the response Date)', async () => {
    const o = await origin({
      '/page': [
        { status: 429, headers: (ctx) => ({ 'Retry-After': httpDate(ctx.dateMs + 3000) }) },
        { status: 200, body: 'ok' },
      ],
    });
    const t0 = clockMs();
    const res = await gateway.fetchVia(o.url('/page'));
    const elapsed = clockMs() - t0;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('hostpace-attempts'), '2');
    assert.ok(elapsed >= 3000 - GATEWAY_TOL && elapsed <= 5000, `answered after ${elapsed.toFixed(0)} ms`);
    assertSpacing(assert, o.arrivals('/page'), 3000, GATEWAY_TOL, 'the retry after an HTTP-date 3 s ahead');
  });

  test('an origin that always answers 429 → its last 429 after 1 + CRAWL_MAX_RETRIES attempts', async () => {
    const o = await origin({
      '/busy': { status: 429, headers: { 'Retry-After': '1', 'Hostpace-Error': 'not_yet' }, body: 'slow down' },
    });
    const res = await gateway.fetchVia(o.url('/busy'));
    assert.equal(res.status, 429);
    assert.equal(await res.text(), 'slow down', "the origin's own answer, not the gateway's");
    assert.equal(res.headers.get('hostpace-error'), null, "no Hostpace-Error on the target's answer, even its own");
    assert.equal(res.headers.get('hostpace-attempts'), '4');
    assert.equal(res.headers.get('retry-after'), '1');
    const times = o.arrivals('/busy');
    assert.equal(times.length, 4, '1 attempt + 3 retries, then the failure is surfaced');
    assertSpacing(assert, times, 1000, GATEWAY_TOL, 'each retry after its Retry-After');
  });

  test('60 requests from 10 concurrent clients to one host at 5/s, capacity 1: audit passes, rate ≥ 95%', async () => {
    const o = await origin({});
    const clients = Array.from({ length: 10 }, async (_, c) => {
      for (let i = 0; i < 6; i++) {
        const res = await gateway.fetchVia(o.url(`/c${c}/p${i}`));
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
    });
    await within(Promise.all(clients), 40_000, '60 requests at 5/s did not finish within 40 s');
    const times = o.arrivals(); // robots.txt included: it goes through the same limiter
    assert.equal(times.length, 61);
    assert.deepEqual(audit({ ratePerSec: RATE, burstCapacity: 1 }, times, [], GATEWAY_TOL), [], "the origin's log passes audit");
    assertSpacing(assert, times, 1000 / RATE, GATEWAY_TOL, 'one host, 10 clients');
    const span = (Math.max(...times) - Math.min(...times)) / 1000;
    const achieved = (times.length - 1) / span;
    assert.ok(achieved >= 0.95 * RATE, `achieved ${achieved.toFixed(2)}/s, allowed ${RATE}/s`);
  });

  test('two hosts: a 429 on one does not slow the other', async () => {
    const a = await origin({ '/x': [{ status: 429, headers: { 'Retry-After': '4' } }, { status: 200 }] });
    const b = await origin({});
    const slow = gateway.fetchVia(a.url('/x'));
    await until(() => a.arrivals('/x').length === 1, { withinMs: 5000, message: 'host A was never fetched' });
    const t0 = clockMs();
    for (let i = 0; i < 5; i++) {
      const res = await gateway.fetchVia(b.url(`/p${i}`));
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    const bElapsed = clockMs() - t0;
    assert.ok(bElapsed < 2500, `host B took ${bElapsed.toFixed(0)} ms for 5 requests while A cooled down`);
    assert.equal(a.arrivals('/x').length, 1, 'host A is still cooling down');
    assert.equal((await slow).status, 200);
    assertSpacing(assert, a.arrivals('/x'), 4000, GATEWAY_TOL, 'host A after its Retry-After');
  });

  test('robots.txt is fetched first, through the limiter, and its Crawl-delay paces the host', async () => {
    // ~12 KB of UTF-8 comments: the report to the host's object is too long for the call header and goes as a body
    const padding = '# réservé, ne pas visiter — 予約済み\n'.repeat(300);
    const o = await origin({
      '/robots.txt': {
        status: 200,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        body: `${padding}User-agent: *\nCrawl-delay: 1\n\nUser-agent: otherbot\nCrawl-delay: 9\n`,
      },
    });
    const results = await Promise.all([1, 2, 3, 4].map((i) => gateway.fetchVia(o.url(`/p${i}`))));
    for (const r of results) {
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
    assert.equal(o.log[0].path, '/robots.txt', 'robots.txt first');
    assert.equal(o.arrivals('/robots.txt').length, 1, 'robots.txt once (cached for CRAWL_ROBOTS_TTL_SEC)');
    assert.equal(o.log[0].headers['user-agent'], UA);
    assertSpacing(assert, o.arrivals(), 1000, GATEWAY_TOL, 'Crawl-delay: 1');
    const report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    assert.equal(report.stats.crawlDelayMs, 1000);
    assert.equal(report.stats.intervalMs, 1000);
    assert.ok(report.robotsFetchedMs > 0);
  });

  test('nowait: 429 + Retry-After at once and nothing reserved; Hostpace-Max-Wait-Ms waits that long', async () => {
    const o = await origin({});
    assert.equal((await gateway.fetchVia(o.url('/first'))).status, 200);
    const before = o.log.length;
    const t0 = clockMs();
    const res = await gateway.fetchVia(o.url('/now'), { 'Hostpace-Mode': 'nowait' });
    const elapsed = clockMs() - t0;
    const message = await expectError(res, 429, 'not_yet', 'nowait');
    assert.match(message, new RegExp(o.host.replace(/\./g, '\\.')));
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(res.headers.get('hostpace-layer'), 'burst');
    assert.ok(Number(res.headers.get('hostpace-wait-ms')) > 0);
    assert.ok(elapsed < 150, `answered in ${elapsed.toFixed(0)} ms`);
    assert.equal(o.log.length, before, 'nothing reached the origin');
    const waited = await gateway.fetchVia(o.url('/soon'), { 'Hostpace-Max-Wait-Ms': '1000' });
    assert.equal(waited.status, 200);
    assert.ok(Number(waited.headers.get('hostpace-wait-ms')) <= 1000);
    const tooShort = await gateway.fetchVia(o.url('/never'), { 'Hostpace-Max-Wait-Ms': '1' });
    await expectError(tooShort, 429, 'not_yet', 'a 1 ms bound');
    assertSpacing(assert, o.arrivals(), 1000 / RATE, GATEWAY_TOL, 'nowait reserved nothing');
    assert.equal(o.arrivals('/never').length + o.arrivals('/now').length, 0);
  });

  test("the caller's Authorization and hop-by-hop headers never reach the origin; responses are filtered", async () => {
    const o = await origin({
      '/h': { status: 200, body: 'ok', headers: { 'Set-Cookie': 'sid=1', 'Hostpace-Layer': 'spoofed', 'X-Origin': '1' } },
    });
    const path = `/v1/fetch?url=${encodeURIComponent(o.url('/h'))}`;
    const res = await new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: gateway.port,
          path,
          headers: {
            authorization: `Bearer ${gateway.token}`,
            'proxy-authorization': 'Basic c2VjcmV0',
            'keep-alive': 'timeout=5',
            te: 'trailers',
            cookie: 'gateway-session=1',
            'hostpace-mode': 'wait',
            'x-forwarded-for': '203.0.113.9',
            'user-agent': 'caller-agent',
            'x-end-to-end': 'kept',
            accept: 'text/html',
          },
        },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
    let body = '';
    for await (const chunk of res) body += chunk;
    assert.equal(res.statusCode, 200);
    assert.equal(body, 'ok');
    const seen = o.log.find((e) => e.path === '/h').headers;
    for (const name of ['authorization', 'proxy-authorization', 'keep-alive', 'te', 'cookie', 'hostpace-mode', 'x-forwarded-for']) {
      assert.equal(seen[name], undefined, `${name} reached the origin: ${JSON.stringify(seen)}`);
    }
    assert.equal(seen['x-end-to-end'], 'kept');
    assert.equal(seen.accept, 'text/html');
    assert.equal(seen['user-agent'], UA, "the gateway's user agent (the one robots.txt rules are matched for)");
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.headers['x-origin'], '1');
    assert.notEqual(res.headers['hostpace-layer'], 'spoofed');
  });

  test('redirects are returned, not followed: the next hop is a new request (new decision, new target check)', async () => {
    const b = await origin({});
    const a = await origin({
      '/r': { status: 302, headers: { Location: b.url('/target') } },
      '/rel': { status: 301, headers: { Location: '/next?x=1' } },
    });
    const res = await gateway.request(`/v1/fetch?url=${encodeURIComponent(a.url('/r'))}`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), null, 'no Location on the gateway\'s origin');
    assert.equal(res.headers.get('hostpace-location'), b.url('/target'));
    // a relative one is resolved against the target, and a client that follows redirects stays put: it never
    // sends its token to a path of the gateway the target chose
    const rel = await gateway.request(`/v1/fetch?url=${encodeURIComponent(a.url('/rel'))}`);
    assert.equal(rel.status, 301);
    assert.equal(rel.headers.get('hostpace-location'), a.url('/next?x=1'));
    await rel.arrayBuffer();
    await sleep(300);
    assert.equal(b.log.length, 0, 'the gateway did not follow the redirect');
    assert.deepEqual(a.log.map((r) => r.path).filter((p) => p !== '/robots.txt'), ['/r', '/rel'], 'nothing followed');
  });

  test('a response larger than CRAWL_MAX_BODY_BYTES is refused, with or without a declared length', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const o = await origin({
      '/big': { status: 200, body: big, headers: { 'Content-Length': String(big.length) } },
      '/big-chunked': { status: 200, body: big },
      '/small-chunked': { status: 200, body: 'y'.repeat(100_000) },
    });
    await expectError(await gateway.fetchVia(o.url('/big')), 502, 'body_too_large', 'a 2 MiB body');
    await expectError(await gateway.fetchVia(o.url('/big-chunked')), 502, 'body_too_large', 'a 2 MiB chunked body');
    const small = await gateway.fetchVia(o.url('/small-chunked'));
    assert.equal(small.status, 200);
    assert.equal((await small.text()).length, 100_000, 'a chunked body under the bound arrives whole');
  });

  test('spellings of one host share one object', async () => {
    const o = await origin({});
    for (const url of [`http://127.0.0.1:${o.port}/a`, `HTTP://127.0.0.1.:${o.port}/b`, `http://0x7f.0.0.1:${o.port}/c`]) {
      const res = await gateway.fetchVia(url);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers.get('hostpace-host'), o.host);
    }
    const report = await (await gateway.request(`/v1/hosts/${encodeURIComponent(`127.0.0.1.:${o.port}`)}`)).json();
    assert.equal(report.host, o.host);
    assert.equal(report.stats.decisions, 4, 'robots.txt and three requests, all on one object');
    assertSpacing(assert, o.arrivals(), 1000 / RATE, GATEWAY_TOL, 'three spellings, one host');
  });

  test('the permission API: POST /v1/acquire reserves, POST /v1/observe learns (cooldown, retry verdict)', async () => {
    const o = await origin({});
    const first = await (await gateway.post('/v1/acquire', { url: o.url('/a') })).json();
    assert.equal(first.host, o.host);
    assert.equal(first.reserved, true);
    const second = await (await gateway.post('/v1/acquire', { url: o.url('/b') })).json();
    assert.equal(second.layer, 'burst');
    // robots.txt went first (its own departure), then these two, 200 ms apart
    assert.ok(second.waitMs > 0, `waitMs ${second.waitMs}`);
    assert.ok(Math.abs(second.departsMs - first.departsMs - 1000 / RATE) < 1, `${first.departsMs} → ${second.departsMs}`);
    const observed = await (
      await gateway.post('/v1/observe', {
        url: o.url('/b'),
        departureId: second.departureId,
        status: 429,
        headers: { 'Retry-After': '2' },
        attempt: 1,
      })
    ).json();
    assert.equal(observed.verdict, 'retry');
    assert.ok(observed.cooldownUntilMs > Date.now() + 1500);
    const third = await (await gateway.post('/v1/acquire', { url: o.url('/c') })).json();
    assert.equal(third.layer, 'cooldown');
    assert.ok(third.waitMs > 1500, `waitMs ${third.waitMs}`);
    // another token wants the host: it holds a reservation there
    const others = await gateway.post('/v1/acquire', { url: o.url('/e') }, { authorization: `Bearer ${OTHER_TOKEN}` });
    assert.equal(others.status, 200, await others.clone().text());
    const other = await others.json();
    const giveUp = await (
      await gateway.post('/v1/observe', { url: o.url('/a'), departureId: first.departureId, status: 503, attempt: 4 })
    ).json();
    assert.equal(giveUp.verdict, 'giveUp');
    // a second throttle report of this token in one period, while another token wants the host, cools only this
    // token: it may not reserve until then
    const cooled = await gateway.post('/v1/acquire', { url: o.url('/d') }, { 'Hostpace-Mode': 'wait' });
    assert.equal(cooled.status, 429);
    assert.equal(cooled.headers.get('hostpace-layer'), 'cooldown');
    await cooled.arrayBuffer();
    const done = await (
      await gateway.post('/v1/observe', { url: o.url('/c'), departureId: third.departureId, status: 200, attempt: 1 })
    ).json();
    assert.equal(done.verdict, 'done');
    const back = await gateway.post('/v1/cancel', { url: o.url('/e'), departureId: other.departureId }, {
      authorization: `Bearer ${OTHER_TOKEN}`,
    });
    assert.equal(back.status, 200, await back.text());
  });

  test('bad input: a clear JSON error for each, and the gateway keeps serving', async () => {
    const o = await origin({});
    const target = o.url('/');
    const cases = [
      ['no token', () => gateway.request(`/v1/fetch?url=${encodeURIComponent(target)}`, { headers: { authorization: null } }), 401, 'unauthorized'],
      ['wrong token', () => gateway.request('/v1/fetch?url=x', { headers: { authorization: 'Bearer wrong' } }), 401, 'unauthorized'],
      ['Basic scheme', () => gateway.request('/v1/fetch?url=x', { headers: { authorization: `Basic ${gateway.token}` } }), 401, 'unauthorized'],
      ['no token on acquire', () => gateway.post('/v1/acquire', { url: target }, { authorization: null }), 401, 'unauthorized'],
      ['missing url', () => gateway.request('/v1/fetch'), 400, 'missing_url'],
      ['ftp scheme', () => gateway.fetchVia('ftp://example.com/file'), 400, 'invalid_url'],
      ['file scheme', () => gateway.fetchVia('file:///etc/passwd'), 400, 'invalid_url'],
      ['userinfo', () => gateway.fetchVia(`http://user:secret@127.0.0.1:${o.port}/`), 400, 'invalid_url'],
      ['not a URL', () => gateway.fetchVia('not a url'), 400, 'invalid_url'],
      ['oversized URL', () => gateway.fetchVia(`${target}?${'a'.repeat(9000)}`), 414, 'url_too_long'],
      ['bad JSON', () => gateway.post('/v1/acquire', '{"url": '), 400, 'invalid_json'],
      ['wrong JSON type', () => gateway.post('/v1/acquire', { url: 42 }), 400, 'invalid_json'],
      ['unknown JSON field', () => gateway.post('/v1/observe', { url: target, stauts: 200 }), 400, 'invalid_json'],
      ['oversized body', () => gateway.post('/v1/acquire', { url: target, pad: 'x'.repeat(70_000) }), 413, 'body_too_large'],
      ['bad status', () => gateway.post('/v1/observe', { url: target, status: 999 }), 400, 'invalid_status'],
      ['bad Hostpace-Mode', () => gateway.fetchVia(target, { 'Hostpace-Mode': 'soon' }), 400, 'invalid_header'],
      ['bad Hostpace-Max-Wait-Ms', () => gateway.fetchVia(target, { 'Hostpace-Max-Wait-Ms': '-5' }), 400, 'invalid_header'],
      ['bad host name', () => gateway.request('/v1/hosts/not%20a%20host'), 400, 'invalid_host'],
      ['unknown host', () => gateway.request('/v1/hosts/never-seen.example'), 404, 'unknown_host'],
      ['unknown route', () => gateway.request('/v2/fetch'), 404, 'not_found'],
      ['wrong method', () => gateway.request('/v1/fetch?url=x', { method: 'POST' }), 405, 'method_not_allowed'],
      ['wrong method on acquire', () => gateway.request('/v1/acquire'), 405, 'method_not_allowed'],
    ];
    for (const [what, send, status, code] of cases) {
      const message = await expectError(await send(), status, code, what);
      if (what === 'ftp scheme') assert.match(message, /ftp/);
      if (what === 'userinfo') {
        assert.match(message, /credentials/);
        assert.doesNotMatch(message, /secret/, 'the message does not echo the credentials');
      }
    }
    assert.equal(o.log.length, 0, 'no bad request reached the origin');
    const health = await fetch(`${gateway.base}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await health.json()).ok, true);
  });

  test('the playground is served at / (static assets from www/), without a token', async () => {
    const res = await fetch(`${gateway.base}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await res.text(), /<html/i);
  });

  test('one structured log line per decision (host, wait, layer, attempt, status)', async () => {
    const o = await origin({ '/p': [{ status: 503, headers: { 'Retry-After': '1' } }, { status: 200 }] });
    assert.equal((await gateway.fetchVia(o.url('/p'))).status, 200);
    await sleep(200); // the Worker's output reaches this process through wrangler's pipe
    const lines = gateway.decisions().filter((l) => l.host === o.host);
    for (const line of lines) {
      for (const field of ['host', 'waitMs', 'layer', 'attempt', 'status', 'route', 'purpose']) {
        assert.ok(field in line, `${field} missing from ${JSON.stringify(line)}`);
      }
    }
    const summary = lines.map((l) => `${l.purpose} ${l.attempt} ${l.layer} ${l.status}`);
    assert.deepEqual(summary, ['robots 0 none 200', 'request 1 burst 503', 'request 2 cooldown 200']);
  });
});

describe('gateway with private targets refused (the default), robots.txt off, 3 hosts per token', () => {
  let gateway;
  let o;
  before(async () => {
    gateway = await Gateway.start({ vars: { CRAWL_ROBOTS_TTL_SEC: '0', CRAWL_MAX_HOSTS_PER_TOKEN: '3' } });
    o = await Origin.start({});
  });
  after(async () => {
    await gateway?.stop();
    await o?.close();
  });

  test('private, loopback and link-local targets → 403, for /v1/fetch and /v1/acquire; nothing is fetched', async () => {
    for (const url of [
      'http://10.0.0.1/',
      o.url('/'),
      `http://localhost:${o.port}/`,
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://0x7f.1/',
      'http://192.168.0.1/',
      'http://intranet/',
    ]) {
      await expectError(await gateway.fetchVia(url), 403, 'private_target', url);
      await expectError(await gateway.post('/v1/acquire', { url }), 403, 'private_target', `acquire ${url}`);
    }
    assert.equal(o.log.length, 0);
  });

  test('a redirect to a private address, followed by the caller through the gateway, is refused', async () => {
    // the gateway returns a 3xx as is (tested above); the next hop is a new request and a new target check
    await expectError(await gateway.fetchVia('http://10.0.0.1/after-redirect'), 403, 'private_target', 'next hop');
  });

  test('spellings of one host name share one object (EXAMPLE.com., example.com:80)', async () => {
    for (const url of ['http://EXAMPLE.com./a', 'http://example.com:80/b', 'HTTP://Example.COM/c']) {
      const d = await (await gateway.post('/v1/acquire', { url })).json();
      assert.equal(d.host, 'example.com', url);
    }
    const report = await (await gateway.request('/v1/hosts/EXAMPLE.com.')).json();
    assert.equal(report.host, 'example.com');
    assert.equal(report.stats.decisions, 3);
  });

  test('the hosts one token may create are bounded; hosts it has are still served', async () => {
    // example.com counts already (the test above)
    assert.equal((await gateway.post('/v1/acquire', { url: 'http://a.example/' })).status, 200);
    assert.equal((await gateway.post('/v1/acquire', { url: 'http://b.example/' })).status, 200);
    const message = await expectError(
      await gateway.post('/v1/acquire', { url: 'http://c.example/' }),
      403,
      'host_limit',
      'a fourth host',
    );
    assert.match(message, /CRAWL_MAX_HOSTS_PER_TOKEN/);
    assert.equal((await gateway.post('/v1/acquire', { url: 'http://a.example/x' })).status, 200);
  });
});

describe('per-host concurrency permits (CRAWL_MAX_CONCURRENCY=1), released when the body is passed on', () => {
  let gateway;
  let o;
  before(async () => {
    gateway = await Gateway.start({
      vars: {
        CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
        CRAWL_ROBOTS_TTL_SEC: '0',
        CRAWL_RATE_PER_SEC: '50',
        CRAWL_BURST_CAPACITY: '1',
        CRAWL_MAX_CONCURRENCY: '1',
      },
    });
    o = await Origin.start({ '*': { status: 200, body: 'slow', delayMs: 300 } });
  });
  after(async () => {
    await gateway?.stop();
    await o?.close();
  });

  test('4 parallel requests to a slow origin never overlap at the origin, and none waits for a lease to end', async () => {
    const t0 = clockMs();
    const results = await Promise.all([1, 2, 3, 4].map((i) => gateway.fetchVia(o.url(`/s${i}`))));
    for (const r of results) assert.equal(await r.text(), 'slow');
    const elapsed = clockMs() - t0;
    // each starts only after the previous response (300 ms) was passed on: never two in flight
    assertSpacing(assert, o.arrivals(), 300, GATEWAY_TOL, 'one request in flight');
    assert.ok(elapsed < 4000, `took ${elapsed.toFixed(0)} ms: a blocked caller was woken by the release`);
    const report = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
    await within(
      (async () => {
        for (;;) {
          const r = await (await gateway.request(`/v1/hosts/${o.host}`)).json();
          if (r.stats.inFlight === 0) return;
          await sleep(50);
        }
      })(),
      3000,
      `a permit was never released: ${JSON.stringify(report.stats)}`,
    );
  });
});

export { gaps };
