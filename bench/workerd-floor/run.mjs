// The local floor of a gateway on workerd: what a do-nothing Worker, a round trip to a Durable Object, and one with a
// SQLite write cost under miniflare (no wrangler proxy), beside the hostpace gateway itself (worker/build, prebuilt
// by scripts/build-worker.sh) and a direct GET, all on 127.0.0.1. Bounded: nine rounds over every row, each row 50
// warm-up + 300 timed requests a round. A row's "over direct" is its p50 minus the direct GET's p50 of the same
// round (the direct GET gets faster as the process warms: measured once, first, it would flatter every row); the
// table shows the median round.
//   scripts/build-worker.sh && node bench/workerd-floor/run.mjs
// With HOSTPACE_BENCH_GROUP_BY=site the gateway groups hosts by site (CRAWL_GROUP_BY=site, the site's limits as loose
// as the hosts'), and its GET /v1/fetch row asks for a host of a site, www.hostpace.test (sent to the origin on
// 127.0.0.1 by tests/gateway/workers/named-hosts.mjs), so that the site's object decides it; the other rows are
// the same.
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { COMPATIBILITY_DATE, startWorkerd } from '../../tests/gateway/gateway.mjs';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const here = new URL('./', import.meta.url).pathname;
const N = 300;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * xs.length)];
async function timed(n, url, headers) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers });
    const body = await r.text();
    if (r.status !== 200) throw new Error(`${url}: status ${r.status}: ${body.slice(0, 300)}`);
    t.push(performance.now() - t0);
  }
  return t;
}
const ROUNDS = 9;
const rounds = [];
let rows = [];
async function row(name, url, headers) {
  await timed(50, url, headers);
  const t = await timed(N, url, headers);
  rows.push({ name, p50: pct(t, 50), p99: pct(t, 99) });
}

const origin = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
});
await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve));
const target = `http://127.0.0.1:${origin.address().port}/`;
const BY_SITE = process.env.HOSTPACE_BENCH_GROUP_BY === 'site';
const gatewayTarget = BY_SITE ? `http://www.hostpace.test:${origin.address().port}/` : target;

const floor = new Miniflare(convertV4MiniflareOptions({
  modules: true,
  scriptPath: `${here}worker.mjs`,
  modulesRoot: here,
  compatibilityDate: COMPATIBILITY_DATE,
  host: '127.0.0.1',
  port: 0,
  durableObjects: { O: { className: 'Obj', useSQLite: true } },
  resourcePersistencePath: mkdtempSync(join(tmpdir(), 'hostpace-floor-')),
}));
// the gateway's Worker build in workerd under miniflare, as the gateway tests start it, with the bench's overrides
const gateway = await startWorkerd({
  token: 'bench-token',
  ...(BY_SITE ? { script: 'tests/gateway/workers/named-hosts.mjs' } : {}),
  vars: {
    CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
    CRAWL_ROBOTS_TTL_SEC: '0',
    CRAWL_RATE_PER_SEC: '100000',
    CRAWL_BURST_CAPACITY: '100000',
    ...(BY_SITE ? { CRAWL_GROUP_BY: 'site' } : {}),
  },
});
try {
  const f = (await floor.ready).href;
  const g = `${gateway.base}/`;
  for (let r = 0; r < ROUNDS; r++) {
  rows = [];
  await row('direct GET to the origin', target);
  await row('do-nothing Worker', `${f}plain`);
  await row('Worker → Durable Object (no storage)', `${f}read`);
  await row('Worker → Durable Object + one SQLite write', `${f}write`);
  await row('Worker fetching the origin', `${f}fetch?url=${encodeURIComponent(target)}`);
  await row('Worker → Durable Object + SQLite write, then fetching the origin', `${f}write-fetch?url=${encodeURIComponent(target)}`);
  await row('hostpace gateway /healthz', `${g}healthz`);
  await row('hostpace gateway GET /v1/fetch', `${g}v1/fetch?url=${encodeURIComponent(gatewayTarget)}`, {
    authorization: 'Bearer bench-token',
  });
  rounds.push(rows);
  }
} finally {
  await floor.dispose();
  await gateway.dispose();
  origin.close();
}
// Durable Object calls per proxied request, counted by the objects themselves (bench/workerd-floor/counted.mjs
// wraps the same build), on a gateway that paces (1/s, burst 1) so one request can wait; each host is an origin
// of its own, and the counts include what the request leaves to run after its answer (waitUntil).
async function callCounts() {
  const hits = new Map();
  const origins = await Promise.all(
    [0, 1].map(async () => {
      const o = http.createServer((req, res) => {
        const n = (hits.get(req.url) ?? 0) + 1;
        hits.set(req.url, n);
        if (req.url.startsWith('/busy') && n === 1) {
          res.writeHead(429, { 'retry-after': '1', 'content-length': '0' });
          return res.end();
        }
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        res.end('ok');
      });
      await new Promise((resolve) => o.listen(0, '127.0.0.1', resolve));
      return o;
    }),
  );
  const counted = await startWorkerd({
    token: 'bench-token',
    script: 'bench/workerd-floor/counted.mjs',
    vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_ROBOTS_TTL_SEC: '0', CRAWL_RATE_PER_SEC: '1', CRAWL_BURST_CAPACITY: '1' },
  });
  const calls = async () => (await fetch(`${counted.base}/__calls`)).json();
  const out = [];
  try {
    const via = async (name, o, path) => {
      const before = await calls();
      const t0 = performance.now();
      const res = await fetch(
        `${counted.base}/v1/fetch?url=${encodeURIComponent(`http://127.0.0.1:${o.address().port}${path}`)}`,
        { headers: { authorization: 'Bearer bench-token' } },
      );
      await res.text();
      const ms = performance.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 300)); // what runs after the answer
      const after = await calls();
      if (res.status !== 200) throw new Error(`${name}: status ${res.status}`);
      out.push({
        name,
        host: after.host - before.host,
        ledger: after.ledger - before.ledger,
        rules: after.rules - before.rules,
        ms,
        waited: res.headers.get('hostpace-wait-ms'),
      });
    };
    const [a, b] = origins;
    const idle = () => new Promise((resolve) => setTimeout(resolve, 1000));
    await via("a token's first request to a host, no wait", a, '/1');
    await idle();
    await via('a later request, no wait', a, '/2');
    await via('the next one at once: it waits its turn', a, '/3');
    await idle();
    await via('a 429 + Retry-After: 1, retried once (first request to the host)', b, '/busy');
  } finally {
    await counted.dispose();
    for (const o of origins) o.close();
  }
  return out;
}
const callRows = await callCounts();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`| row | p50 ms | p99 ms | p50 over direct (median of ${ROUNDS} rounds) | each round |`);
console.log('|---|---:|---:|---:|---|');
for (let i = 0; i < rounds[0].length; i++) {
  const over = rounds.map((rs) => rs[i].p50 - rs[0].p50);
  const p50 = median(rounds.map((rs) => rs[i].p50));
  const p99 = median(rounds.map((rs) => rs[i].p99));
  console.log(
    `| ${rounds[0][i].name} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ${median(over).toFixed(2)} | ${over.map((o) => o.toFixed(2)).join(' · ')} |`,
  );
}
console.log('');
console.log('| proxied request | host object calls | token ledger calls | rules object calls | answered after ms | Hostpace-Wait-Ms |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const c of callRows) {
  console.log(`| ${c.name} | ${c.host} | ${c.ledger} | ${c.rules} | ${c.ms.toFixed(0)} | ${c.waited} |`);
}
