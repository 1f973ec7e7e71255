// The local floor of a gateway on workerd: what a do-nothing Worker, a round trip to a Durable Object, and one with a
// SQLite write cost under miniflare (no wrangler proxy), beside the hostpace gateway itself (worker/build, prebuilt
// by scripts/build-worker.sh) and a direct GET, all on 127.0.0.1. Bounded: three rounds over every row, each row 50
// warm-up + 300 timed requests a round. A row's "over direct" is its p50 minus the direct GET's p50 of the same
// round (the direct GET gets faster as the process warms: measured once, first, it would flatter every row); the
// table shows the median round.
//   scripts/build-worker.sh && node bench/workerd-floor/run.mjs
import { Miniflare } from 'miniflare';
import http from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const here = new URL('./', import.meta.url).pathname;
const root = new URL('../../', import.meta.url).pathname;
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
const ROUNDS = 3;
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

const floor = new Miniflare({
  modules: true,
  scriptPath: `${here}worker.mjs`,
  modulesRoot: here,
  compatibilityDate: '2026-05-01',
  host: '127.0.0.1',
  port: 0,
  durableObjects: { O: { className: 'Obj', useSQLite: true } },
  durableObjectsPersist: mkdtempSync(join(tmpdir(), 'hostpace-floor-')),
});
// the gateway's [vars] as wrangler.toml has them (miniflare does not read it), with the bench's overrides
const tomlVars = readFileSync(`${root}wrangler.toml`, 'utf8').split(/^\[vars\]$/m)[1] ?? '';
const vars = {
  ...Object.fromEntries([...tomlVars.matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm)].map((m) => [m[1], m[2]])),
  GATEWAY_TOKEN: 'bench-token',
  CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
  CRAWL_ROBOTS_TTL_SEC: '0',
  CRAWL_RATE_PER_SEC: '100000',
  CRAWL_BURST_CAPACITY: '100000',
};
const gateway = new Miniflare({
  modules: true,
  scriptPath: `${root}worker/build/index.js`,
  modulesRoot: root,
  modulesRules: [
    { type: 'CompiledWasm', include: ['**/*.wasm'] },
    { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
  ],
  compatibilityDate: '2026-05-01',
  host: '127.0.0.1',
  port: 0,
  durableObjects: {
    HOSTS: { className: 'HostObject', useSQLite: true },
    LEDGER: { className: 'TokenLedger', useSQLite: true },
  },
  durableObjectsPersist: mkdtempSync(join(tmpdir(), 'hostpace-floor-gw-')),
  bindings: vars,
  handleRuntimeStdio: (stdout, stderr) => { stdout.resume(); stderr.resume(); }, // the decision log, dropped
});
try {
  const f = (await floor.ready).href;
  const g = (await gateway.ready).href;
  for (let r = 0; r < ROUNDS; r++) {
  rows = [];
  await row('direct GET to the origin', target);
  await row('do-nothing Worker', `${f}plain`);
  await row('Worker → Durable Object (no storage)', `${f}read`);
  await row('Worker → Durable Object + one SQLite write', `${f}write`);
  await row('Worker fetching the origin', `${f}fetch?url=${encodeURIComponent(target)}`);
  await row('Worker → Durable Object + SQLite write, then fetching the origin', `${f}write-fetch?url=${encodeURIComponent(target)}`);
  await row('hostpace gateway /healthz', `${g}healthz`);
  await row('hostpace gateway GET /v1/fetch', `${g}v1/fetch?url=${encodeURIComponent(target)}`, {
    authorization: 'Bearer bench-token',
  });
  rounds.push(rows);
  }
} finally {
  await floor.dispose();
  await gateway.dispose();
  origin.close();
}
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
