// The gateway's configuration is strict: a misspelt CRAWL_* variable and every invalid value are reported
// together, in a log line when the Worker first reads them and on /healthz (503 with the list), and the gateway
// serves nothing else meanwhile. CRAWL_USER_AGENT left at wrangler.toml's placeholder is refused whenever the
// gateway is reached at a name other than a loopback address (deployed), and accepted under wrangler dev.
// Judged from what the gateway answers and what a real origin on 127.0.0.1 received.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { originPool, sleep } from '../js/helpers.mjs';
import { Gateway } from './gateway.mjs';

/** GET `path` from the gateway over node:http with `host` as the Host header (fetch does not let it be set); a JSON
 * body parsed. */
function getWithHost(gateway, path, host, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: gateway.port, path, headers: { host, ...headers }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, body: /json/.test(res.headers['content-type']) ? JSON.parse(body) : body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

describe('gateway configuration', () => {
  const origins = originPool();
  after(() => origins.closeAll());

  test('a misspelt variable and every bad value are reported together: log, /healthz 503, nothing served', async () => {
    const o = await origins.start({ '/': { status: 200, body: 'hello' } });
    const gateway = await Gateway.start({
      healthy: false,
      vars: {
        CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
        CRAWL_RATE_PER_SECOND: '5', // misspelt: CRAWL_RATE_PER_SEC
        CRAWL_BURST_CAPACITY: '0.5',
        CRAWL_MAX_WAIT_SEC: 'forever',
      },
    });
    try {
      const expected = [
        'CRAWL_RATE_PER_SECOND is not a setting of the gateway (did you mean CRAWL_RATE_PER_SEC?)',
        'CRAWL_BURST_CAPACITY: invalid burstCapacity: 0.5',
        'CRAWL_MAX_WAIT_SEC="forever" (expected seconds >= 0)',
      ];
      const health = await fetch(`${gateway.base}/healthz`);
      assert.equal(health.status, 503);
      const report = await health.json();
      assert.equal(report.ok, false);
      assert.equal(typeof report.version, 'string', 'a gateway answers (the playground shows the problems)');
      assert.equal(report.problems.length, 3, JSON.stringify(report));
      for (const [i, text] of expected.entries()) assert.ok(report.problems[i].startsWith(text), report.problems[i]);

      const res = await gateway.fetchVia(o.url('/'));
      assert.equal(res.status, 503);
      const { error } = await res.json();
      assert.equal(error.code, 'config_invalid');
      for (const text of expected) assert.ok(error.message.includes(text), `${text} missing from ${error.message}`);
      assert.equal(o.log.length, 0, 'nothing reached the origin');

      // one log line, written when the Worker first read the configuration (start polls /healthz), with the list
      await sleep(300); // the Worker's output reaches this process through wrangler's pipe
      const lines = gateway.output.filter((l) => l.includes('"config_invalid"'));
      assert.equal(lines.length, 1, lines.join('\n'));
      for (const text of ['CRAWL_RATE_PER_SECOND', 'CRAWL_BURST_CAPACITY', 'CRAWL_MAX_WAIT_SEC']) {
        assert.ok(lines[0].includes(text), `${text} missing from the log line ${lines[0]}`);
      }
    } finally {
      await gateway.stop();
    }
  });

  test('the placeholder User-Agent is refused when deployed (a public Host) and accepted on loopback', async () => {
    const o = await origins.start({ '/': { status: 200, body: 'hello' } });
    const gateway = await Gateway.start({ vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true' } });
    try {
      const auth = { authorization: `Bearer ${gateway.token}` };
      const path = `/v1/fetch?url=${encodeURIComponent(o.url('/'))}`;
      for (const host of ['hostpace-gateway.example.workers.dev', 'crawl.example.com:443']) {
        const health = await getWithHost(gateway, '/healthz', host);
        assert.equal(health.status, 503, host);
        assert.equal(health.body.problems.length, 1);
        assert.match(health.body.problems[0], /^CRAWL_USER_AGENT is still the placeholder/);
        const res = await getWithHost(gateway, path, host, auth);
        assert.equal(res.status, 503, host);
        assert.equal(res.body.error.code, 'config_invalid');
        assert.match(res.body.error.message, /CRAWL_USER_AGENT/);
      }
      assert.equal(o.log.length, 0, 'nothing reached the origin while the placeholder was refused');
      for (const host of [`127.0.0.1:${gateway.port}`, `localhost:${gateway.port}`, `[::1]:${gateway.port}`]) {
        assert.equal((await getWithHost(gateway, '/healthz', host)).status, 200, host);
      }
      assert.equal((await getWithHost(gateway, path, `localhost:${gateway.port}`, auth)).status, 200);
      assert.equal(o.arrivals('/').length, 1, 'served on loopback');
    } finally {
      await gateway.stop();
    }
  });

  test('a User-Agent of its own is served at any host name', async () => {
    const o = await origins.start({ '/': { status: 200, body: 'hello' } });
    const agent = 'examplebot/1.0 (+https://crawler.example.org/about)';
    const gateway = await Gateway.start({
      vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_USER_AGENT: agent },
    });
    try {
      const host = 'hostpace-gateway.example.workers.dev';
      assert.equal((await getWithHost(gateway, '/healthz', host)).status, 200);
      const path = `/v1/fetch?url=${encodeURIComponent(o.url('/'))}`;
      const res = await getWithHost(gateway, path, host, { authorization: `Bearer ${gateway.token}` });
      assert.equal(res.status, 200);
      const page = o.log.filter((e) => e.path === '/');
      assert.equal(page.length, 1);
      assert.equal(page[0].headers['user-agent'], agent, 'the origin saw the configured User-Agent');
    } finally {
      await gateway.stop();
    }
  });
});
