#!/usr/bin/env node
// Frame time of the playground with 20 lanes, simulated and live, in headless Chromium (Debian's), measured by the
// page itself (`window.playground.frameStats()`: the page's work per frame and the interval between frames).
//
//   npm run build:pkg && scripts/build-worker.sh && node bench/playground.mjs
//
// Simulated: the "429 with Retry-After" scenario with 20 hosts at 10x, www/ from a static server. Live: the gateway
// (wrangler dev) serving www/, 20 origins on 127.0.0.1 crawled through it with one token for the whole run, the page
// in Live mode with that token; also the requests per second the open page makes. 5 s each, after 0.5 s of
// warm-up. Output: a line each, and bench/results/playground.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { Origin } from '../tests/js/helpers.mjs';
import { frameLine, launch, measureFrames, openLive } from '../tests/playground/frames.mjs';
import { serveStatic } from '../tests/playground/server.mjs';
import { Gateway, root } from '../tests/gateway/gateway.mjs';
import { crawlMany } from '../tests/gateway/live.mjs';

const TOKEN = 'bench-token-0c5e81';
const browser = await launch();
const results = { date: new Date().toISOString(), node: process.version, cpuModel: os.cpus()[0]?.model, cpus: os.cpus().length };
results.chromium = `Chromium ${browser.version()}`;

const server = await serveStatic(`${root}www`);
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`${server.base}/#scenario=retry429&hosts=20`);
  await page.waitForFunction(() => window.playground?.ready === true);
  await page.getByRole('button', { name: '10×' }).click();
  results.simulated = await measureFrames(page);
  console.log(frameLine('simulated, 20 hosts at 10x', results.simulated));
  await page.close();
} finally {
  await server.close();
}

const gateway = await Gateway.start({ vars: { CRAWL_ALLOW_PRIVATE_TARGETS: 'true', CRAWL_RATE_PER_SEC: '5' }, token: TOKEN });
const hosts = await Promise.all(Array.from({ length: 20 }, () => Origin.start({})));
try {
  const crawl = crawlMany(gateway, TOKEN, hosts, 12_000);
  const page = await openLive(browser, gateway.base, TOKEN, 20);
  const before = await page.evaluate(() => window.playground.liveStats());
  const t0 = Date.now();
  results.live = await measureFrames(page);
  const after = await page.evaluate(() => window.playground.liveStats());
  results.live.requestsPerSec = (after.requests - before.requests) / ((Date.now() - t0) / 1000);
  results.live.pollPeriodMs = after.periodMs;
  console.log(`${frameLine('live, 20 lanes', results.live)}; ${results.live.requestsPerSec.toFixed(2)} requests/s`);
  await page.close();
  await crawl;
} finally {
  await browser.close();
  await gateway.stop();
  await Promise.all(hosts.map((o) => o.close()));
}
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/playground.json`, `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/playground.json');
