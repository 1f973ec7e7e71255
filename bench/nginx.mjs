#!/usr/bin/env node
// A crawler against a real nginx `limit_req` server: how many requests the site turns away and how much of its
// allowed rate the crawler gets, read from nginx's own access log (tests/js/nginx.mjs).
//
//   npm run build:pkg && node bench/nginx.mjs     # every row (minutes), bench/results/nginx.json
//   node bench/nginx.mjs --rows 1x,5x+adaptive     # some rows (development): prints them, writes no JSON
//   node bench/nginx.mjs --rows 1x --out FILE      # … and writes their JSON to FILE
//
// The site: nginx on 127.0.0.1 (Debian's, as scripts/setup.sh installs it), 40 pages limited to 2 requests a
// second per client address with no burst (`limit_req_zone … rate=2r/s; limit_req zone=site;`); a rejection is a
// 429 with `Retry-After: 1`. The crawler: a fresh `Limiter` per row (robots.txt ignored: only the pacing is
// judged) configured at 1x, 2.5x and 5x the site's rate, each without and with adaptive pacing (`adaptive: {}`,
// its defaults), and 8 callers pulling the 40 page URLs from one queue, each `await limiter.fetch(url,
// { timeoutMs: 60_000, signal })` and reading the body. A row is given up after 180 s (the signal aborts every
// call and no caller takes another URL). Each row gets a fresh nginx on a port of its own. One more row, 5x+gateway,
// crawls through the edge gateway instead (`scripts/build-worker.sh` first): wrangler dev on 127.0.0.1 with
// CRAWL_RATE_PER_SEC=10, CRAWL_BURST_CAPACITY=4, robots.txt not obeyed, CRAWL_MAX_RESERVATIONS_PER_TOKEN=8 (one
// reservation per caller, as the package's Limiter lets each of them hold one), and `GatewayLimiter.fetch` for
// each call, all with one token.
//
// Per row, from the access log: requests to pages (log lines), 429s, the share rejected, pages answered 200,
// seconds from the first to the last page-request line (nginx's $msec), pages/s = (pages − 1) ÷ those seconds
// (a crawl at exactly 2 pages a second measures 2), and pages/s as a share of the site's 2/s.
// Goals: at 1x no request rejected; at 5x at most 10 % rejected and at least 70 % of the site's rate.
//
// Output: a markdown table on stdout (progress on stderr) and bench/results/nginx.json.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { GatewayLimiter, Limiter } from '../pkg/node.js';
import { Gateway } from '../tests/gateway/gateway.mjs';
import { NGINX, crawl, judge, startNginx } from '../tests/js/nginx.mjs';
import { environment } from './common.mjs';

const SITE = { ratePerSec: 2, burst: 0, retryAfterSec: 1 };
const PAGES = 40;
const CALLERS = 8;
const CALL_TIMEOUT_MS = 60_000;
const ROW_BOUND_MS = 180_000;
const GOALS = { '1x': { maxRejectedShare: 0 }, '5x': { maxRejectedShare: 0.1, minAllowedRateShare: 0.7 } };

const MULTIPLIERS = [
  { id: '1x', times: 1, config: { ratePerSec: 2, burstCapacity: 1 } },
  { id: '2.5x', times: 2.5, config: { ratePerSec: 5, burstCapacity: 2 } },
  { id: '5x', times: 5, config: { ratePerSec: 10, burstCapacity: 4 } },
];
const ROWS = [
  ...MULTIPLIERS.flatMap((m) => [
    { ...m, adaptive: false },
    { ...m, id: `${m.id}+adaptive`, adaptive: true, config: { ...m.config, adaptive: {} } },
  ]),
  // the same crawl through the edge gateway (wrangler dev on 127.0.0.1, worker/build from scripts/build-worker.sh):
  // GatewayLimiter.fetch, the limits set by the gateway's CRAWL_* variables
  { ...MULTIPLIERS[2], id: '5x+gateway', goal: '5x', adaptive: false, via: 'gateway' },
];

// --- command line
const args = process.argv.slice(2);
function usage(problem) {
  if (problem) process.stderr.write(`nginx.mjs: ${problem}\n`);
  process.stderr.write(
    `usage: node bench/nginx.mjs [--rows ID,ID…] [--out FILE]\nrows: ${ROWS.map((r) => r.id).join(', ')}\n`,
  );
  process.exit(problem ? 2 : 0);
}
const opts = {};
for (let i = 0; i < args.length; i++) {
  const [name, inline] = args[i].split(/=(.*)/s);
  if (name === '--help' || name === '-h') usage();
  if (name !== '--rows' && name !== '--out') usage(`unknown argument ${args[i]}`);
  const value = inline ?? args[++i];
  if (value === undefined) usage(`${name} needs a value`);
  opts[name.slice(2)] = value;
}
let rows = ROWS;
if (opts.rows !== undefined) {
  const wanted = opts.rows.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !ROWS.some((r) => r.id === w));
  if (unknown.length || !wanted.length) usage(`unknown row ${unknown.join(', ') || '(none given)'}`);
  rows = ROWS.filter((r) => wanted.includes(r.id));
}
const outFile = opts.out ?? (opts.rows === undefined ? new URL('./results/nginx.json', import.meta.url) : null);

// --- the rows
const goalOf = (row) => GOALS[row.goal ?? row.id.replace('+adaptive', '')] ?? null;
function met(goal, j) {
  if (!goal) return null;
  if (j.rejectedShare > goal.maxRejectedShare) return false;
  if (goal.minAllowedRateShare !== undefined && !(j.pagesPerSec / SITE.ratePerSec >= goal.minAllowedRateShare)) return false;
  return true;
}

/** The gateway, its limits those of `config`, reaching the nginx on 127.0.0.1, robots.txt not obeyed. */
async function startGateway(config) {
  const vars = {
    CRAWL_ALLOW_PRIVATE_TARGETS: 'true',
    CRAWL_OBEY_ROBOTS: 'false',
    CRAWL_RATE_PER_SEC: String(config.ratePerSec),
    CRAWL_BURST_CAPACITY: String(config.burstCapacity),
    CRAWL_MAX_WAIT_SEC: '60',
    // one token, CALLERS callers: each may hold a reservation, as with the package's Limiter. With the default (4),
    // half the callers wait in `429 reservation_limit` for the others' departures, and a host slowed by pushback
    // climbs back faster (each success gives back at most a step above the rate its departures leave at, and
    // with fewer reserved ahead a raised rate shows sooner), so the crawl probes past the site's rate again
    // within the 40 pages, as the package row's does not
    CRAWL_MAX_RESERVATIONS_PER_TOKEN: String(CALLERS),
  };
  return Gateway.start({ vars, token: 'bench-token-4e21b7' });
}

async function measure(row) {
  const site = await startNginx({ ratePerSec: SITE.ratePerSec, burst: SITE.burst, pages: PAGES });
  try {
    await site.warm();
    const gateway = row.via === 'gateway' ? await startGateway(row.config) : undefined;
    let run;
    try {
      const limiter = gateway
        ? new GatewayLimiter(gateway.base, gateway.token)
        : new Limiter({ ...row.config, robots: 'ignore' });
      const urls = Array.from({ length: PAGES }, (_, i) => site.url(`/p/${i}.html`));
      const signal = AbortSignal.timeout(ROW_BOUND_MS);
      run = await crawl(limiter, urls, { callers: CALLERS, timeoutMs: CALL_TIMEOUT_MS, signal });
    } finally {
      await gateway?.stop();
    }
    const signal = { aborted: run.wallMs >= ROW_BOUND_MS };
    await site.sync();
    const j = judge(site.log(), PAGES);
    const goal = goalOf(row);
    return {
      id: row.id,
      timesSiteRate: row.times,
      adaptive: row.adaptive,
      via: row.via ?? 'package',
      config: row.config,
      requests: j.requests,
      rejected: j.rejected,
      rejectedShare: +j.rejectedShare.toFixed(4),
      otherStatuses: j.otherStatuses,
      pagesFetched: j.pagesFetched,
      pagesFetchedTwice: j.pagesFetchedTwice,
      seconds: +j.seconds.toFixed(3),
      pagesPerSec: Number.isFinite(j.pagesPerSec) ? +j.pagesPerSec.toFixed(3) : null,
      allowedRateShare: Number.isFinite(j.pagesPerSec) ? +(j.pagesPerSec / SITE.ratePerSec).toFixed(4) : null,
      callers: { ok: run.ok, gaveUp: run.gaveUp, failed: run.failed, finalStatuses: run.statuses },
      wallSeconds: +(run.wallMs / 1000).toFixed(1),
      givenUpAfterBound: signal.aborted,
      goal,
      met: met(goal, j),
    };
  } finally {
    await site.stop();
  }
}

const pct = (x) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(1)} %`);
const num = (x, d = 2) => (x === null || x === undefined ? '–' : x.toFixed(d));
const started = performance.now();
const results = [];
for (const row of rows) {
  process.stderr.write(`${row.id}: ${JSON.stringify(row.config)} …\n`);
  const r = await measure(row);
  results.push(r);
  process.stderr.write(
    `${row.id}: ${r.rejected}/${r.requests} rejected, ${r.pagesFetched}/${PAGES} pages, ${num(r.pagesPerSec)} pages/s ` +
      `(${pct(r.allowedRateShare)} of ${SITE.ratePerSec}/s) in ${r.wallSeconds} s` +
      `${r.givenUpAfterBound ? ' (given up after 180 s)' : ''}\n`,
  );
}

const lines = [
  `| row | crawler | requests | 429s | rejected | pages | seconds | pages/s | of the allowed rate | goal met |`,
  '|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|',
];
for (const r of results) {
  const cfg =
    `${r.config.ratePerSec}/s, burst ${r.config.burstCapacity}${r.adaptive ? ', adaptive' : ''}` +
    `${r.via === 'gateway' ? ', through the gateway' : ''}`;
  lines.push(
    `| ${r.id} | ${cfg} | ${r.requests} | ${r.rejected} | ${pct(r.rejectedShare)} | ${r.pagesFetched}/${PAGES} | ` +
      `${num(r.seconds, 1)} | ${num(r.pagesPerSec)} | ${pct(r.allowedRateShare)} | ` +
      `${r.met === null ? '–' : r.met ? 'yes' : 'no'}${r.givenUpAfterBound ? ' (given up after 180 s)' : ''} |`,
  );
}
console.log(lines.join('\n'));

if (outFile) {
  // `nginx -v` prints its version on stderr
  const v = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
  const nginx = `${v.stderr ?? ''}${v.stdout ?? ''}`.trim().replace(/^nginx version:\s*/, '') || null;
  const out = {
    ...environment('nginx', false),
    nginx,
    workload: {
      site: { ...SITE, server: 'nginx limit_req on 127.0.0.1, keyed by $binary_remote_addr', pages: PAGES },
      callers: CALLERS,
      callTimeoutMs: CALL_TIMEOUT_MS,
      rowBoundSec: ROW_BOUND_MS / 1000,
      robots: 'ignore',
      pagesPerSec: '(pages fetched - 1) / seconds from the first to the last page-request line of the access log ($msec)',
    },
    goals: GOALS,
    rowsFilter: opts.rows ?? null,
    results,
    totalSeconds: +((performance.now() - started) / 1000).toFixed(1),
  };
  mkdirSync(outFile instanceof URL ? new URL('./', outFile) : dirname(resolve(outFile)), { recursive: true });
  writeFileSync(outFile, JSON.stringify(out, null, 2) + '\n');
  process.stderr.write(`wrote ${outFile instanceof URL ? 'bench/results/nginx.json' : outFile} (${out.totalSeconds} s)\n`);
}
