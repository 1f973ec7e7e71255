// Gateway overhead and throughput on loopback (figures in BENCHMARKS.md). Not a test: run it on an idle machine,
//   scripts/build-worker.sh && node tests/gateway/bench.mjs
// 1. latency: N sequential GETs straight to an origin on 127.0.0.1, then the same through GET /v1/fetch with a
//    policy that never waits (rate and burst far above the load, robots.txt off): p50/p99 of each and the
//    difference (what the gateway adds: auth, target check, a Durable Object decision, depart confirmation,
//    observe, header filtering, streaming); /healthz (no Durable Object) shows what wrangler dev itself costs;
// 2. throughput: GET /v1/fetch across HOSTS origins (each its own port on 127.0.0.1, so its own host and Durable
//    Object), CONCURRENCY requests in flight, for at most SECONDS or TOTAL requests, whichever comes first.
// Everything is bounded; the gateway and the origins are stopped at the end.

import http from 'node:http';
import { Gateway } from './gateway.mjs';

const N = Number(process.env.N ?? 300);
const HOSTS = Number(process.env.HOSTS ?? 1000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const SECONDS = Number(process.env.SECONDS ?? 20);
const TOTAL = Number(process.env.TOTAL ?? 5000);

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function startOrigin() {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

async function timed(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fn(i);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}: ${res.headers.get('content-type')}`);
    times.push(performance.now() - t0);
  }
  return times;
}

const origins = [];
let gateway;
try {
  gateway = await Gateway.start({
    vars: {
      CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
      CRAWL_ROBOTS_TTL_SEC: '0',
      CRAWL_RATE_PER_SEC: '100000',
      CRAWL_BURST_CAPACITY: '100000',
      CRAWL_MAX_HOSTS_PER_TOKEN: String(HOSTS + 10),
    },
  });
  for (let i = 0; i < HOSTS; i++) origins.push(await startOrigin());
  const one = origins[0].url;
  const via = (url) => fetch(`${gateway.base}/v1/fetch?url=${encodeURIComponent(url)}`, {
    headers: { authorization: `Bearer ${gateway.token}` },
  });
  await timed(50, () => fetch(one)); // warm both paths
  await timed(50, () => via(one));
  const health = await timed(N, () => fetch(`${gateway.base}/healthz`));
  const direct = await timed(N, () => fetch(one));
  const gated = await timed(N, () => via(one));
  const row = (name, xs) => `${name.padEnd(22)} p50 ${percentile(xs, 50).toFixed(2)} ms  p99 ${percentile(xs, 99).toFixed(2)} ms`;
  console.log(`latency, ${N} sequential GETs, one host`);
  console.log(row('direct', direct));
  console.log(row('gateway /healthz', health));
  console.log(row('via the gateway', gated));
  console.log(`overhead p50 ${(percentile(gated, 50) - percentile(direct, 50)).toFixed(2)} ms, ` +
    `p99 ${(percentile(gated, 99) - percentile(direct, 99)).toFixed(2)} ms`);

  let sent = 0;
  let done = 0;
  let failed = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (sent < TOTAL && performance.now() < deadline) {
      const url = origins[sent++ % HOSTS].url;
      const res = await via(url);
      await res.arrayBuffer();
      if (res.status === 200) done++;
      else failed++;
    }
  }));
  const secs = (performance.now() - t0) / 1000;
  console.log(`throughput across ${HOSTS} hosts, ${CONCURRENCY} in flight: ${done} ok + ${failed} failed in ` +
    `${secs.toFixed(1)} s = ${(done / secs).toFixed(0)} requests/s`);
} finally {
  await gateway?.stop();
  await Promise.all(origins.map((o) => new Promise((resolve) => o.server.close(resolve))));
}
