// Bodies through the gateway (real origins on 127.0.0.1, the real gateway in workerd via wrangler dev): a body cut
// by the deadline is a failed download for curl and for fetch, never a clean end; a body without a length cut by
// its connection is a 502; a body over the limit (decoded,
// or without a length) is a 502 before any byte; an oversized JSON request is refused by its Content-Length, and
// the gateway keeps serving. All of it with concurrency permits (a body's end gives one back, so the gateway
// watches it pass) and without (a body with a length then goes as it came, cut by the fetch's own deadline).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Gateway } from './gateway.mjs';

const MAX_BODY = 10 * 1024 * 1024;
const VARS = {
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_RATE_PER_SEC: '50',
  CRAWL_BURST_CAPACITY: '50',
  CRAWL_ROBOTS_TTL_SEC: '0',
  CRAWL_FETCH_TIMEOUT_SEC: '3',
  CRAWL_MAX_BODY_BYTES: String(MAX_BODY),
};
const MiB = 1024 * 1024;
const zipped = gzipSync(Buffer.alloc(16 * MiB, 97)); // 16 MiB decoded, a few KB on the wire

/**
 * An origin that breaks HTTP framing (node:http will not): `Content-Length: 100000` and `Transfer-Encoding: chunked`
 * together (the chunked framing wins), one chunk of 50,000 bytes, then the connection is dropped.
 */
async function startMisframed() {
  const server = net.createServer((socket) => {
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n');
      socket.write(`${(50_000).toString(16)}\r\n${'z'.repeat(50_000)}\r\n`, () => setTimeout(() => socket.destroy(), 50));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: (p) => `http://127.0.0.1:${server.address().port}${p}` };
}

/** An origin with bodies of every kind: stalled, gzip bombs, large and length-less. */
async function startOrigin() {
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    if (path === '/stall') {
      // declares 100,000 bytes, sends 10, then nothing
      res.writeHead(200, { 'content-length': '100000', 'content-type': 'text/plain' });
      res.write('0123456789');
      return;
    }
    if (path === '/short') {
      // declares 100,000 bytes, sends 50,000, then the connection is dropped
      res.writeHead(200, { 'content-length': '100000', 'content-type': 'text/plain' });
      res.write(Buffer.alloc(50_000, 122), () => setTimeout(() => res.destroy(), 50));
      return;
    }
    if (path === '/cut') {
      // no length: 256 KiB, then the connection is dropped mid-body
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(256 * 1024, 121), () => setTimeout(() => res.destroy(), 50));
      return;
    }
    if (path === '/gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': String(zipped.length) });
      res.end(zipped);
      return;
    }
    if (path === '/ok') {
      res.writeHead(200, { 'content-length': String(500 * 1024) });
      res.end(Buffer.alloc(500 * 1024, 98));
      return;
    }
    if (path.startsWith('/chunked')) {
      // no length: `n` MiB in 64 KiB chunks, as fast as the reader takes them
      const n = Number(new URL(req.url, 'http://x').searchParams.get('mib') ?? 3);
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < n * 16) {
          sent += 1;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    res.end('x');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: (p) => `http://127.0.0.1:${server.address().port}${p}` };
}

for (const concurrency of ['64', '0']) describe(`gateway: bodies, CRAWL_MAX_CONCURRENCY=${concurrency}`, () => {
  let gateway;
  let origin;
  const via = (target) => `${gateway.base}/v1/fetch?url=${encodeURIComponent(target)}`;
  const auth = () => ({ authorization: `Bearer ${gateway.token}` });
  const curl = (target) =>
    promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H',
      `authorization: Bearer ${gateway.token}`, '--max-time', '20', via(target)])
      .then((o) => ({ exit: 0, out: o.stdout }), (e) => ({ exit: e.code, out: e.stdout }));

  before(async () => {
    origin = await startOrigin();
    gateway = await Gateway.start({ vars: { ...VARS, CRAWL_MAX_CONCURRENCY: concurrency } });
  });

  after(async () => {
    await gateway?.stop();
    origin?.server.close();
    origin?.server.closeAllConnections?.();
  });

  test('a complete body with a length arrives whole, with its length', async () => {
    const res = await fetch(via(origin.url('/ok')), { headers: auth() });
    assert.equal(res.headers.get('content-length'), String(500 * 1024));
    assert.equal((await res.arrayBuffer()).byteLength, 500 * 1024);
  });

  /** `target` through the gateway is a failed download: curl exits 18 (partial file), fetch's 200 body fails. */
  const assertFailedDownload = async (target) => {
    const c = await curl(target);
    assert.equal(c.exit, 18, `curl: partial file expected, got exit ${c.exit} (${c.out})`);
    const res = await fetch(via(target), { headers: auth() });
    assert.equal(res.status, 200);
    await assert.rejects(res.arrayBuffer(), 'fetch sees the body fail, not end');
    return res;
  };

  test('a body that stalls past CRAWL_FETCH_TIMEOUT_SEC is a failed download for curl and for fetch', async () => {
    await assertFailedDownload(origin.url('/stall'));
  });

  test('a body cut before its Content-Length is a failed download for curl and for fetch', async () => {
    const res = await assertFailedDownload(origin.url('/short'));
    assert.equal(res.headers.get('content-length'), '100000');
  });

  test('a body whose Content-Length its chunked framing overrides, cut midway, never ends clean', async () => {
    const misframed = await startMisframed();
    try {
      const c = await curl(misframed.url('/'));
      assert.ok(c.exit !== 0 || !c.out.startsWith('200 '), `curl: ${c.exit} (${c.out}): a cut body must not end clean`);
      const res = await fetch(via(misframed.url('/')), { headers: auth() });
      if (res.status === 200) await assert.rejects(res.arrayBuffer(), 'fetch sees the body fail, not end');
      else assert.ok(res.status >= 500, `status ${res.status}`);
    } finally {
      misframed.server.close();
    }
  });

  test('a gzip body within its Content-Length but over the limit decoded is refused', async () => {
    const res = await fetch(via(origin.url('/gzip')), { headers: auth() });
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, 'body_too_large');
  });

  test('a body without a length over the limit is a 502 before any byte; within it, whole with its length', async () => {
    const big = await fetch(via(origin.url('/chunked?mib=12')), { headers: auth() });
    assert.equal(big.status, 502);
    assert.equal((await big.json()).error.code, 'body_too_large');
    const c = await curl(origin.url('/chunked?mib=12'));
    assert.equal(c.out.split(' ')[0], '502');
    const small = await fetch(via(origin.url('/chunked-small?mib=0.5')), { headers: auth() });
    assert.equal(small.status, 200);
    assert.equal(small.headers.get('content-length'), String(MiB / 2));
    assert.equal((await small.arrayBuffer()).byteLength, MiB / 2);
  });

  test('a body without a length whose connection drops midway is a 502, never a short 200', async () => {
    const res = await fetch(via(origin.url('/cut')), { headers: auth() });
    const body = await res.text();
    assert.equal(res.status, 502, `answered ${res.status} with ${body.length} bytes`);
    assert.equal(JSON.parse(body).error.code, 'upstream_failed');
  });

  test('a JSON request over 64 KiB is refused by its Content-Length, and the next request is served', async () => {
    const big = await fetch(`${gateway.base}/v1/acquire`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ url: origin.url('/x'), pad: 'x'.repeat(2 * MiB) }),
    });
    assert.equal(big.status, 413);
    assert.equal((await big.json()).error.code, 'body_too_large');
    for (let i = 0; i < 4; i += 1) {
      const next = await fetch(`${gateway.base}/v1/acquire`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ url: origin.url(`/after${i}`) }),
      });
      const answer = await next.json();
      assert.equal(next.status, 200, `request ${i} after the refused one: ${JSON.stringify(answer)}`);
      const { departureId } = answer;
      await fetch(`${gateway.base}/v1/cancel`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ url: origin.url(`/after${i}`), departureId }),
      }).then((r) => r.arrayBuffer());
    }
  });
});

