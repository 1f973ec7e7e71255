// Many large bodies without a length at once, through the gateway's Worker in workerd (miniflare, without
// wrangler's dev proxy, which itself stalls under such a load): /healthz keeps answering and workerd's memory
// stays bounded (its resident size, sampled while the bodies pass). The origin runs in a process of its own on
// 127.0.0.1 and curl downloads, so neither side competes with this process's event loop, which samples.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { sleep } from '../js/helpers.mjs';
import { startWorkerd } from './gateway.mjs';

const MiB = 1024 * 1024;
const BODY_MIB = 10;
const CLIENTS = 16;
/** What the isolate may read of bodies without a length at once (relay.rs), and the bound asserted beyond it. */
const BUFFERED_MIB = 64;
const ALLOWED_GROWTH_MIB = 3 * BUFFERED_MIB;

// `node -e` origin: GET /chunked answers BODY_MIB MiB without a length, in 64 KiB chunks, as fast as it is read
const ORIGIN = `
const http = require('node:http');
const chunk = Buffer.alloc(64 * 1024, 120);
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  let sent = 0;
  const pump = () => {
    while (sent < ${BODY_MIB * 16}) {
      sent += 1;
      if (!res.write(chunk)) return res.once('drain', pump);
    }
    res.end();
  };
  pump();
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

/** The resident size of processes `pids`, in MiB. */
async function rssMiB(pids) {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', pids.join(',')]);
  return stdout.split('\n').reduce((kib, line) => kib + (Number(line.trim()) || 0), 0) / 1024;
}

test(`${CLIENTS} concurrent ${BODY_MIB} MiB bodies without a length: /healthz answers, memory stays bounded`, async () => {
  const origin = spawn(process.execPath, ['-e', ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const gateway = await startWorkerd({
    vars: {
      CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
      CRAWL_RATE_PER_SEC: '1000',
      CRAWL_BURST_CAPACITY: '1000',
      CRAWL_ROBOTS_TTL_SEC: '0',
      CRAWL_MAX_BODY_BYTES: String(BODY_MIB * MiB),
      CRAWL_FETCH_TIMEOUT_SEC: '20',
    },
  });
  try {
    const port = await new Promise((resolve, reject) => {
      origin.stdout.once('data', (d) => resolve(Number(String(d).trim())));
      origin.once('exit', (code) => reject(new Error(`the origin exited ${code}`)));
    });
    const target = `${gateway.base}/v1/fetch?url=${encodeURIComponent(`http://127.0.0.1:${port}/chunked`)}`;
    // a client that takes a body at `rate` bytes a second (curl's --limit-rate), or as fast as it can
    const download = (rate) =>
      promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '--max-time',
        '30', ...(rate ? ['--limit-rate', String(rate)] : []), '-H', `authorization: Bearer ${gateway.token}`,
        target]).then((o) => o.stdout);
    assert.equal(await download(), `200 ${BODY_MIB * MiB}`, 'one body alone passes whole');
    const pids = await gateway.workerdPids();
    assert.ok(pids.length > 0, 'workerd runs');
    const baseline = await rssMiB(pids);

    let done = false;
    let peak = baseline;
    const health = [];
    const watch = (async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await fetch(`${gateway.base}/healthz`, { signal: AbortSignal.timeout(5000) }).catch((e) => e);
        health.push({ status: res.status ?? String(res), ms: performance.now() - t0 });
        peak = Math.max(peak, await rssMiB(pids));
        await sleep(100);
      }
    })();
    const started = performance.now();
    // slow clients (about 10 s a body): what they have not taken yet stays in the gateway's memory
    const answers = await Promise.all(Array.from({ length: CLIENTS }, () => download(MiB)));
    const tookMs = performance.now() - started;
    done = true;
    await watch;

    const whole = answers.filter((a) => a === `200 ${BODY_MIB * MiB}`).length;
    const busy = answers.filter((a) => a.startsWith('503 ')).length;
    const slowest = Math.max(...health.map((h) => h.ms));
    console.log(
      `${CLIENTS} × ${BODY_MIB} MiB in ${tookMs.toFixed(0)} ms: ${whole} whole, ${busy} × 503 gateway_busy; ` +
        `workerd RSS ${baseline.toFixed(0)} → peak ${peak.toFixed(0)} MiB; ${health.length} /healthz, ` +
        `slowest ${slowest.toFixed(0)} ms`,
    );
    assert.equal(whole + busy, CLIENTS, `every answer is the whole body or 503: ${answers.join(', ')}`);
    assert.ok(whole >= 1, 'bodies pass while others are refused');
    // a body's share goes back once its last bytes are in the sockets' buffers (a few MB before curl has them),
    // so on a loaded machine one or two more may start while the first ones' tails are still on the way
    const atOnce = BUFFERED_MIB / BODY_MIB;
    assert.ok(whole <= atOnce + 2, `about ${BUFFERED_MIB} MiB of such bodies at once: ${whole} whole`);
    assert.ok(health.length >= 2 && health.every((h) => h.status === 200), `/healthz: ${JSON.stringify(health)}`);
    assert.ok(peak - baseline <= ALLOWED_GROWTH_MIB, `RSS grew ${(peak - baseline).toFixed(0)} MiB`);
    assert.equal(await download(), `200 ${BODY_MIB * MiB}`, 'and the gateway serves on');
  } finally {
    await gateway.dispose();
    origin.kill();
  }
});
