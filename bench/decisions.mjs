#!/usr/bin/env node
// Decisions per second: hostpace vs peer rate limiters, one Node process, one workload.
//
//   node bench/decisions.mjs            # full run (< 3 min on a 2-core machine)
//   node bench/decisions.mjs --quick    # 1/10 of the decisions, for a smoke check
//   node bench/decisions.mjs --only=hostpace.acquireIds,limiter.tryRemoveTokens   # some rows (development)
//
// Workload (shared by every row): DECISIONS decisions over HOSTS hosts, the host of decision k taken from a fixed
// pseudo-random sequence (mulberry32, fixed seed), so every library sees the same hosts in the same order. A
// decision is "may one request to host H go now / reserve it". Each timed run starts from a fresh limiter (per-host
// state is created lazily inside the timed loop, as a crawler would) and the limit is the same everywhere:
// 2 requests per second per host, burst 2. Peers are keyed by the host name (no URL parsing) unless the row says
// otherwise; hostpace's string path takes a full URL (`https://hostN.example/page/P`, 8 pages per host) and parses
// it on every call. See bench/README.md for what is fair and unfair about each comparison.
//
// Output: a markdown table on stdout and bench/results/decisions.json.

import { Limiter } from '../pkg/node.js';
import { RateLimiter } from 'limiter';
import Bottleneck from 'bottleneck';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import pThrottle from 'p-throttle';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { environment, mulberry32 } from './common.mjs';

const QUICK = process.argv.includes('--quick');
const SCALE = QUICK ? 0.1 : 1;
const HOSTS = 10_000;
const DECISIONS = Math.round(1_000_000 * SCALE);
const PAGES = 8; // URLs per host for the string path
const RATE = 2; // requests per second per host
const BURST = 2;
const DT_MS = 0.001; // virtual clock step per decision: 1,000,000 decisions span 1 s of virtual time
const T0_MS = 1_000_000; // virtual clock origin (ms)
const BATCH = 1000; // promises in flight for the batched async rows
const SEED = 0x5eed;
// acquire(url) costs several µs a call (~30× acquireId): its rows take the first half of the shared sequence so that
// the whole script stays under 3 minutes (per-decision cost does not depend on the length of the run).
const STRING_PATH_DECISIONS = 500_000;
const BUDGET_S = 150; // past this, remaining rows get a single timed run (flagged in the output)

const results = [];
const started = performance.now();

// ---------------------------------------------------------------------------------------------------------------
// The shared workload.

const seq = new Uint32Array(DECISIONS);
{
  const rand = mulberry32(SEED);
  for (let k = 0; k < DECISIONS; k++) seq[k] = Math.floor(rand() * HOSTS);
}
const hostNames = Array.from({ length: HOSTS }, (_, h) => `host${h}.example`);
const urls = new Array(HOSTS * PAGES);
for (let h = 0; h < HOSTS; h++) for (let p = 0; p < PAGES; p++) urls[h * PAGES + p] = `https://host${h}.example/page/${p}`;
const urlOf = (k) => urls[seq[k] * PAGES + (k & (PAGES - 1))];

// A full collection before every timed run, so that no run pays for the garbage of the one before (a peer's run
// leaves ten thousand limiters and a URL object per decision behind). Node exposes gc() only under --expose-gc;
// the flag set at run time takes effect for a new context.
v8.setFlagsFromString('--expose-gc');
const gc = globalThis.gc ?? vm.runInNewContext('gc');

// ---------------------------------------------------------------------------------------------------------------
// Rows. Each: setup() -> state (untimed), run(state, n) -> number of "go now" decisions (timed; may be async),
// teardown(state) (untimed).

const HP_CONFIG = { ratePerSec: RATE, burstCapacity: BURST };

function hostpaceIds() {
  const limiter = new Limiter(HP_CONFIG);
  const ids = new Uint32Array(HOSTS);
  for (let h = 0; h < HOSTS; h++) ids[h] = limiter.intern(urls[h * PAGES]);
  return { limiter, ids };
}

const rows = [
  // --- hostpace -------------------------------------------------------------------------------------------------
  {
    id: 'hostpace.acquireId.virtual',
    library: 'hostpace',
    kind: 'hostpace',
    call: 'limiter.acquireId(id, nowMs) (interned host ids, virtual clock)',
    setup: hostpaceIds,
    run({ limiter, ids }, n) {
      let go = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k++) {
        now += DT_MS;
        if (limiter.acquireId(ids[seq[k]], now) === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'hostpace.acquireIds.virtual',
    library: 'hostpace',
    kind: 'hostpace',
    call: `limiter.acquireIds(ids, nowsMs, waitsOut) (${BATCH} decisions per call into a reused array, same hosts and instants as acquireId.virtual)`,
    setup() {
      const state = hostpaceIds();
      state.batchIds = new Uint32Array(BATCH);
      state.batchNows = new Float64Array(BATCH);
      state.waits = new Float64Array(BATCH);
      return state;
    },
    run({ limiter, ids, batchIds, batchNows, waits }, n) {
      let go = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k += BATCH) {
        const m = Math.min(BATCH, n - k);
        for (let j = 0; j < m; j++) {
          now += DT_MS;
          batchIds[j] = ids[seq[k + j]];
          batchNows[j] = now;
        }
        limiter.acquireIds(batchIds.subarray(0, m), batchNows.subarray(0, m), waits);
        for (let j = 0; j < m; j++) if (waits[j] === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  // (its own loop, not the row above's with a branch: a loop shared by both rows measured ~5 ns a decision slower,
  // a cost of the caller's code, not of the library)
  {
    id: 'hostpace.acquireIds.clock',
    library: 'hostpace',
    kind: 'hostpace',
    call: `limiter.acquireIds(ids, null, waitsOut) (${BATCH} decisions per call at one clock reading, into a reused array)`,
    setup() {
      const state = hostpaceIds();
      state.batchIds = new Uint32Array(BATCH);
      state.waits = new Float64Array(BATCH);
      return state;
    },
    run({ limiter, ids, batchIds, waits }, n) {
      let go = 0;
      for (let k = 0; k < n; k += BATCH) {
        const m = Math.min(BATCH, n - k);
        for (let j = 0; j < m; j++) batchIds[j] = ids[seq[k + j]];
        limiter.acquireIds(batchIds.subarray(0, m), null, waits);
        for (let j = 0; j < m; j++) if (waits[j] === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'hostpace.acquireId.clock',
    library: 'hostpace',
    kind: 'hostpace',
    call: 'limiter.acquireId(id) (interned host ids, default clock)',
    setup: hostpaceIds,
    run({ limiter, ids }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) if (limiter.acquireId(ids[seq[k]]) === 0) go++;
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'hostpace.acquire.virtual',
    library: 'hostpace',
    kind: 'hostpace',
    n: STRING_PATH_DECISIONS,
    call: 'limiter.acquire(url, nowMs) (URL string parsed per call, virtual clock)',
    setup: () => ({ limiter: new Limiter(HP_CONFIG) }),
    run({ limiter }, n) {
      let go = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k++) {
        now += DT_MS;
        if (limiter.acquire(urlOf(k), now).waitMs === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'hostpace.acquire.clock',
    library: 'hostpace',
    kind: 'hostpace',
    n: STRING_PATH_DECISIONS,
    call: 'limiter.acquire(url) (URL string parsed per call, default clock)',
    setup: () => ({ limiter: new Limiter(HP_CONFIG) }),
    run({ limiter }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) if (limiter.acquire(urlOf(k)).waitMs === 0) go++;
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },

  // --- where acquire(url)'s time goes (diagnostics, fewer decisions) ---------------------------------------------
  {
    id: 'diag.js-url',
    library: '(platform)',
    kind: 'diagnostic',
    n: 100_000,
    call: 'new URL(url).hostname in plain JS (no limiter): the platform parse alone',
    setup: () => ({}),
    run(_, n) {
      let len = 0;
      for (let k = 0; k < n; k++) len += new URL(urlOf(k)).hostname.length;
      return len > 0 ? 0 : -1;
    },
  },
  {
    id: 'diag.hostpace.intern',
    library: 'hostpace',
    kind: 'diagnostic',
    n: 100_000,
    call: 'limiter.intern(url): URL parse through the wasm boundary + host lookup, returns an integer (no decision)',
    setup: hostpaceIds,
    run({ limiter }, n) {
      let s = 0;
      for (let k = 0; k < n; k++) s += limiter.intern(urlOf(k));
      return s >= 0 ? 0 : -1;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'diag.hostpace.intern+acquireId',
    library: 'hostpace',
    kind: 'diagnostic',
    n: 100_000,
    call: 'limiter.acquireId(limiter.intern(url), nowMs): parse + decision, no result object',
    setup: () => ({ limiter: new Limiter(HP_CONFIG) }),
    run({ limiter }, n) {
      let go = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k++) {
        now += DT_MS;
        if (limiter.acquireId(limiter.intern(urlOf(k)), now) === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'diag.hostpace.robotsCheck',
    library: 'hostpace',
    kind: 'diagnostic',
    n: 100_000,
    call: 'limiter.robotsCheck(url, nowMs): what is known of the host\'s robots.txt for the URL, every host\'s robots.txt known (four rules): parse + match + result object',
    setup() {
      const limiter = new Limiter(HP_CONFIG);
      const robots = 'User-agent: *\nDisallow: /private/\nDisallow: /*.php$\nAllow: /private/open\nDisallow: /search?\n';
      for (const host of hostNames) limiter.setRobots(host, robots, undefined, T0_MS);
      return { limiter };
    },
    run({ limiter }, n) {
      let allowed = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k++) {
        now += DT_MS;
        if (limiter.robotsCheck(urlOf(k), now).verdict === 'allowed') allowed++;
      }
      return allowed;
    },
    teardown: ({ limiter }) => limiter.free(),
  },
  {
    id: 'diag.hostpace.peek',
    library: 'hostpace',
    kind: 'diagnostic',
    n: 100_000,
    call: 'limiter.peek(url, nowMs): parse + decision without reserving + result object',
    setup: () => ({ limiter: new Limiter(HP_CONFIG) }),
    run({ limiter }, n) {
      let go = 0;
      let now = T0_MS;
      for (let k = 0; k < n; k++) {
        now += DT_MS;
        if (limiter.peek(urlOf(k), now).waitMs === 0) go++;
      }
      return go;
    },
    teardown: ({ limiter }) => limiter.free(),
  },

  // --- peers ----------------------------------------------------------------------------------------------------
  {
    id: 'limiter.tryRemoveTokens',
    library: 'limiter@4.1.0',
    kind: 'peer',
    call: 'Map<host, RateLimiter>.get(host).tryRemoveTokens(1) (sync, takes a token or says no)',
    setup: () => ({ map: new Map() }),
    run({ map }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) {
        const h = hostNames[seq[k]];
        let l = map.get(h);
        if (l === undefined) map.set(h, (l = new RateLimiter({ tokensPerInterval: RATE, interval: 'second' })));
        if (l.tryRemoveTokens(1)) go++;
      }
      return go;
    },
  },
  {
    id: 'limiter.tryRemoveTokens+URL',
    library: 'limiter@4.1.0',
    kind: 'reference',
    call: 'same, keyed by new URL(url).host per call (what a JS string path costs with a JS limiter)',
    setup: () => ({ map: new Map() }),
    run({ map }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) {
        const h = new URL(urlOf(k)).host;
        let l = map.get(h);
        if (l === undefined) map.set(h, (l = new RateLimiter({ tokensPerInterval: RATE, interval: 'second' })));
        if (l.tryRemoveTokens(1)) go++;
      }
      return go;
    },
  },
  {
    id: 'rlf.consume.batched',
    library: 'rate-limiter-flexible@11.4.0',
    kind: 'peer',
    call: `RateLimiterMemory.consume(host), ${BATCH} promises in flight, then awaited (resolve = go, reject = no)`,
    setup: () => ({ rl: new RateLimiterMemory({ points: RATE, duration: 1 }) }),
    async run({ rl }, n) {
      let go = 0;
      const yes = () => {
        go++;
      };
      const no = () => {};
      const batch = new Array(BATCH);
      for (let k = 0; k < n; ) {
        const end = Math.min(n, k + BATCH);
        let j = 0;
        for (; k < end; k++) batch[j++] = rl.consume(hostNames[seq[k]]).then(yes, no);
        batch.length = j;
        await Promise.all(batch);
      }
      return go;
    },
    // Its per-key expiry timers are unref'd and die with the store; nothing to clear.
  },
  {
    id: 'rlf.consume.sequential',
    library: 'rate-limiter-flexible@11.4.0',
    kind: 'peer',
    n: 300_000,
    call: 'await RateLimiterMemory.consume(host) one at a time (try/catch; reject = no)',
    setup: () => ({ rl: new RateLimiterMemory({ points: RATE, duration: 1 }) }),
    async run({ rl }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) {
        try {
          await rl.consume(hostNames[seq[k]]);
          go++;
        } catch {
          // limited
        }
      }
      return go;
    },
  },
  {
    id: 'bottleneck.check.batched',
    library: 'bottleneck@2.19.5',
    kind: 'peer',
    n: 20_000,
    call: `Group.key(host).check(), ${BATCH} in flight (does NOT reserve; each check yields via setTimeout(0))`,
    setup: () => ({ group: new Bottleneck.Group({ minTime: 1000 / RATE }) }),
    async run({ group }, n) {
      let go = 0;
      const yes = (ok) => {
        if (ok) go++;
      };
      const batch = new Array(BATCH);
      for (let k = 0; k < n; ) {
        const end = Math.min(n, k + BATCH);
        let j = 0;
        for (; k < end; k++) batch[j++] = group.key(hostNames[seq[k]]).check().then(yes);
        batch.length = j;
        await Promise.all(batch);
      }
      return go;
    },
    // Its idle-key sweeper (setInterval, unref'd) would keep the group and its 10,000 limiters reachable.
    teardown: ({ group }) => clearInterval(group.interval),
  },
  {
    id: 'bottleneck.check.sequential',
    library: 'bottleneck@2.19.5',
    kind: 'peer',
    n: 500,
    call: 'await Group.key(host).check() one at a time (one setTimeout(0) per decision)',
    setup: () => ({ group: new Bottleneck.Group({ minTime: 1000 / RATE }) }),
    async run({ group }, n) {
      let go = 0;
      for (let k = 0; k < n; k++) if (await group.key(hostNames[seq[k]]).check()) go++;
      return go;
    },
    teardown: ({ group }) => clearInterval(group.interval),
  },
  {
    id: 'bottleneck.schedule.batched',
    library: 'bottleneck@2.19.5',
    kind: 'peer',
    n: 5_000,
    call: `Group.key(host).schedule(noop) with a huge reservoir (every job runs), ${BATCH} in flight`,
    setup: () => ({ group: new Bottleneck.Group({ reservoir: 1e12 }) }),
    async run({ group }, n) {
      const noop = () => Promise.resolve();
      const batch = new Array(BATCH);
      for (let k = 0; k < n; ) {
        const end = Math.min(n, k + BATCH);
        let j = 0;
        for (; k < end; k++) batch[j++] = group.key(hostNames[seq[k]]).schedule(noop);
        batch.length = j;
        await Promise.all(batch);
      }
      return n;
    },
    teardown: ({ group }) => clearInterval(group.interval),
  },
  {
    id: 'p-throttle.windowed',
    library: 'p-throttle@8.1.1',
    kind: 'peer',
    n: 200_000,
    call: 'Map<host, throttled(noop)>.get(host)() (reserves a slot; a delayed call costs a Promise + setTimeout)',
    setup() {
      const controller = new AbortController();
      return { map: new Map(), controller, delayed: { count: 0 } };
    },
    run(state, n) {
      const { map, controller, delayed } = state;
      const onDelay = () => {
        delayed.count++;
      };
      const noop = () => {};
      const swallow = () => {};
      let calls = 0;
      for (let k = 0; k < n; k++) {
        const h = hostNames[seq[k]];
        let f = map.get(h);
        if (f === undefined) {
          f = pThrottle({ limit: RATE, interval: 1000, signal: controller.signal, onDelay })(noop);
          map.set(h, f);
        }
        f().catch(swallow); // pending calls are aborted (rejected) in teardown
        calls++;
      }
      return calls - delayed.count;
    },
    async teardown({ controller }) {
      controller.abort(); // clears every pending setTimeout
      await new Promise((r) => setImmediate(r));
    },
  },
];

const SKIPPED = [
  {
    library: 'p-queue@9.x',
    reason:
      'no decision API: PQueue.add(job) enqueues a job and runs it later (interval/intervalCap are enforced by ' +
      'timers); there is no "may this go now" call, no key, and a Map of 10,000 queues would measure job and timer ' +
      'bookkeeping, not a rate decision. p-throttle (same author) is measured instead.',
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Runner.

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function once(row, n) {
  const state = await row.setup();
  gc();
  const t0 = performance.now();
  const go = await row.run(state, n);
  const ms = performance.now() - t0;
  if (row.teardown) await row.teardown(state);
  return { ms, go };
}

async function measure(row) {
  const n = Math.max(100, Math.round((row.n ?? 1_000_000) * SCALE));
  if (n > DECISIONS) throw new Error(`${row.id}: ${n} decisions > the shared sequence (${DECISIONS})`);
  // warm-up: a tenth of the run, but at least 50,000 decisions (or the whole run if shorter) so the JIT settles
  const warmN = Math.min(n, Math.max(Math.round(n / 10), Math.round(50_000 * SCALE)));
  const warm = await once(row, warmN);
  const projected = (warm.ms * n) / warmN / 1000; // seconds per full run
  const overBudget = (performance.now() - started) / 1000 > BUDGET_S;
  const runs = overBudget ? 1 : projected < 1.5 ? 5 : 3;
  const times = [];
  let go = 0;
  for (let r = 0; r < runs; r++) {
    const o = await once(row, n);
    times.push(o.ms);
    go = o.go;
  }
  const med = median(times);
  const best = Math.min(...times);
  const res = {
    id: row.id,
    library: row.library,
    kind: row.kind,
    call: row.call,
    decisions: n,
    runs,
    msPerRun: times.map((t) => +t.toFixed(1)),
    medianMs: +med.toFixed(1),
    perSecMedian: Math.round((n / med) * 1000),
    perSecBest: Math.round((n / best) * 1000),
    nsPerDecision: +((med * 1e6) / n).toFixed(0),
    goNow: row.kind === 'diagnostic' ? null : go,
    goNowShare: row.kind === 'diagnostic' ? null : +(go / n).toFixed(4),
    overBudget,
  };
  results.push(res);
  process.stderr.write(
    `  ${row.id.padEnd(34)} ${String(res.perSecMedian).padStart(10)}/s  (median of ${runs}, ${n} decisions, ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s elapsed)\n`,
  );
  return res;
}

process.stderr.write(
  `decisions: ${DECISIONS} over ${HOSTS} hosts, ${RATE}/s burst ${BURST} per host` +
    `${QUICK ? ' (--quick)' : ''}; node ${process.version}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`,
);
for (const s of SKIPPED) process.stderr.write(`  skipped ${s.library}: ${s.reason}\n`);
// --only=a,b: just the rows whose id contains one of these (a development aid: prints them, writes no JSON)
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
for (const row of rows) if (!ONLY || ONLY.some((part) => row.id.includes(part))) await measure(row);

// ---------------------------------------------------------------------------------------------------------------
// Paired rounds: the ratios the project holds itself to. A goal's two rows take turns, one timed run each per
// round (which goes first alternates), over the same decisions; the round's ratio is the peer's time over
// hostpace's, and the figure is the median over the rounds. A machine that slows down or speeds up between two
// rows of the table moves both runs of a round alike, so these ratios hold still where the table's do not.

const PAIRS = [
  { id: 'stringPath', row: 'hostpace.acquire.virtual', peer: 'limiter.tryRemoveTokens+URL', n: STRING_PATH_DECISIONS },
  { id: 'stringPathClock', row: 'hostpace.acquire.clock', peer: 'limiter.tryRemoveTokens+URL', n: STRING_PATH_DECISIONS },
  { id: 'batched', row: 'hostpace.acquireIds.virtual', peer: 'limiter.tryRemoveTokens', n: DECISIONS },
  { id: 'fastPath', row: 'hostpace.acquireId.virtual', peer: 'limiter.tryRemoveTokens', n: DECISIONS },
];
const ROUNDS = QUICK ? 3 : 15;

async function pair(p) {
  const [a, b] = [p.row, p.peer].map((id) => rows.find((r) => r.id === id));
  const n = Math.round(p.n * SCALE);
  const perRound = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ms = {};
    for (const row of round % 2 ? [b, a] : [a, b]) ms[row.id] = (await once(row, n)).ms;
    perRound.push(ms[b.id] / ms[a.id]);
  }
  const res = {
    id: p.id,
    row: a.id,
    peer: b.id,
    decisions: n,
    rounds: ROUNDS,
    ratios: perRound.map((r) => +r.toFixed(3)),
    median: +median(perRound).toFixed(3),
    min: +Math.min(...perRound).toFixed(3),
    max: +Math.max(...perRound).toFixed(3),
  };
  process.stderr.write(
    `  paired ${a.id} / ${b.id}: ${res.median}× (median of ${ROUNDS} rounds, ${res.min}–${res.max})\n`,
  );
  return res;
}

const paired = [];
for (const p of PAIRS) if (!ONLY || ONLY.some((part) => p.row.includes(part) || p.peer.includes(part))) paired.push(await pair(p));

// ---------------------------------------------------------------------------------------------------------------
// Report.

if (ONLY) {
  // a partial run: its rows only, nothing written (ratios and the JSON need every row)
  for (const r of results) console.log(`${r.id}: ${r.nsPerDecision} ns/decision (median of ${r.runs}), go now ${r.goNow}`);
  for (const p of paired) console.log(`${p.row} / ${p.peer}: ${p.median}× (rounds ${p.ratios.join(', ')})`);
  process.exit(0);
}
const byId = Object.fromEntries(results.map((r) => [r.id, r]));
const peers = results.filter((r) => r.kind === 'peer');
const fastestPeer = peers.reduce((a, b) => (b.perSecMedian > a.perSecMedian ? b : a));
const ratio = (id, base) => +(byId[id].perSecMedian / base.perSecMedian).toFixed(3);
const ratios = {
  fastestPeer: fastestPeer.id,
  fastPathVirtual: ratio('hostpace.acquireId.virtual', fastestPeer),
  fastPathClock: ratio('hostpace.acquireId.clock', fastestPeer),
  batchedVirtual: ratio('hostpace.acquireIds.virtual', fastestPeer),
  batchedClock: ratio('hostpace.acquireIds.clock', fastestPeer),
  stringPathVirtual: ratio('hostpace.acquire.virtual', fastestPeer),
  stringPathClock: ratio('hostpace.acquire.clock', fastestPeer),
  stringPathVirtualVsPeerWithUrlParse: ratio('hostpace.acquire.virtual', byId['limiter.tryRemoveTokens+URL']),
};
for (const r of results) r.ratioToFastestPeer = +(r.perSecMedian / fastestPeer.perSecMedian).toFixed(3);

const fmt = (x) => x.toLocaleString('en-US');
const lines = [];
lines.push(
  `### Decisions per second (${fmt(DECISIONS)} decisions over ${fmt(HOSTS)} hosts; ${RATE}/s, burst ${BURST} per host)`,
);
lines.push('');
lines.push('| row | call | decisions | runs | decisions/s (median) | best | ns/decision | go now | × fastest peer |');
lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const go = r.goNowShare === null ? '–' : `${(r.goNowShare * 100).toFixed(1)} %`;
  lines.push(
    `| ${r.kind === 'diagnostic' ? '_' + r.id + '_' : r.id} | ${r.call.replace(/\|/g, '\\|')} | ${fmt(r.decisions)} | ${r.runs} | ` +
      `${fmt(r.perSecMedian)} | ${fmt(r.perSecBest)} | ${fmt(r.nsPerDecision)} | ${go} | ${r.kind === 'diagnostic' ? '–' : r.ratioToFastestPeer.toFixed(3)} |`,
  );
}
for (const s of SKIPPED) lines.push(`| ${s.library} | skipped: ${s.reason} | | | | | | | |`);
lines.push('');
lines.push(`Fastest peer: \`${fastestPeer.id}\` (${fmt(fastestPeer.perSecMedian)}/s).`);
lines.push(
  `hostpace / fastest peer: fast path ${ratios.fastPathVirtual}× (virtual clock), ${ratios.fastPathClock}× (default clock); ` +
    `batched fast path ${ratios.batchedVirtual}× (virtual clock), ${ratios.batchedClock}× (one clock reading per batch); ` +
    `string path ${ratios.stringPathVirtual}× (virtual), ${ratios.stringPathClock}× (default clock); ` +
    `string path vs limiter + new URL(): ${ratios.stringPathVirtualVsPeerWithUrlParse}×.`,
);
const diagUrl = byId['diag.js-url'];
const diagIntern = byId['diag.hostpace.intern'];
const diagInternAcq = byId['diag.hostpace.intern+acquireId'];
const acqV = byId['hostpace.acquire.virtual'];
const idV = byId['hostpace.acquireId.virtual'];
const breakdown = {
  platformUrlNs: diagUrl.nsPerDecision,
  internNs: diagIntern.nsPerDecision,
  internPlusAcquireIdNs: diagInternAcq.nsPerDecision,
  acquireIdNs: idV.nsPerDecision,
  acquireUrlNs: acqV.nsPerDecision,
  peekUrlNs: byId['diag.hostpace.peek'].nsPerDecision,
  robotsCheckNs: byId['diag.hostpace.robotsCheck'].nsPerDecision,
};
lines.push(
  `Where acquire(url, now)'s ${breakdown.acquireUrlNs} ns go: the decision itself (acquireId) is ` +
    `${breakdown.acquireIdNs} ns, so ~${breakdown.acquireUrlNs - breakdown.acquireIdNs} ns are the URL and the ` +
    `boundary (string in, URL parse, host key, result object out). For scale: plain-JS new URL(url).hostname ` +
    `${breakdown.platformUrlNs} ns; intern(url) (URL to host id through the boundary, no decision) ` +
    `${breakdown.internNs} ns; acquireId(intern(url)) ${breakdown.internPlusAcquireIdNs} ns; peek(url) ` +
    `${breakdown.peekUrlNs} ns. The robots.txt check fetch and schedule make before each request ` +
    `(robotsCheck(url), the host's rules known): ${breakdown.robotsCheckNs} ns.`,
);
lines.push('');
lines.push(`Paired rounds (${ROUNDS} rounds per pair, one timed run of each row per round, alternating which goes first):`);
lines.push('');
lines.push('| hostpace row | peer row | decisions | ratio (median) | lowest | highest |');
lines.push('|---|---|---:|---:|---:|---:|');
for (const p of paired) {
  lines.push(`| ${p.row} | ${p.peer} | ${fmt(p.decisions)} | ${p.median.toFixed(2)}× | ${p.min.toFixed(2)}× | ${p.max.toFixed(2)}× |`);
}
const table = lines.join('\n');
console.log(table);

const out = {
  ...environment('decisions', QUICK),
  workload: {
    decisions: DECISIONS,
    hosts: HOSTS,
    sequence: `mulberry32(seed ${SEED}) host index per decision; URL = https://host<h>.example/page/<k mod ${PAGES}>`,
    limit: { ratePerSec: RATE, burst: BURST },
    hostpaceConfig: HP_CONFIG,
    virtualClock: { originMs: T0_MS, stepMsPerDecision: DT_MS },
    batchInFlight: BATCH,
    freshStatePerRun: true,
  },
  results,
  ratios,
  paired,
  breakdownNs: breakdown,
  skipped: SKIPPED,
  totalSeconds: +((performance.now() - started) / 1000).toFixed(1),
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/decisions.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
process.stderr.write(`wrote bench/results/decisions.json (${out.totalSeconds} s)\n`);
