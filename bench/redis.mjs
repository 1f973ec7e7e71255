#!/usr/bin/env node
// A fleet on one Redis: SharedLimiter (hostpace/redis) beside rate-limiter-flexible's RateLimiterRedis, on a real
// redis-server on 127.0.0.1 that this script starts (tests/support/redis.mjs) and stops by its PID at the end.
//
//   node bench/redis.mjs                 # every row (2 to 3 min on a 2-core machine), bench/results/redis.json
//   node bench/redis.mjs --quick         # a tenth of the decisions (a smoke check; the JSON says "quick": true)
//   node bench/redis.mjs --only=p1.1host,memory   # some rows (ids containing a part): prints them, writes no JSON
//   node bench/redis.mjs --only=p1.10khosts --pause-ms=1   # each process pauses 1 ms after each decision (the
//                                        # machine not saturated: a decision's latency alone); writes no JSON
//
// Decision rows: P child processes (1, 4, 16), each with its own ioredis 5 client (`enableOfflineQueue: false`)
// and its own limiter, make decisions one at a time (each awaited before the next) on 1 host or on 10,000 hosts
// (host of decision k from a fixed pseudo-random sequence per process, mulberry32, as bench/decisions.mjs). The
// policy is 2 requests per second per host, burst 2: hostpace's `acquire(url)` reserves a departure and returns at
// once with its wait (nothing sleeps), rate-limiter-flexible's `consume(host)` (points 2, duration 1 s) resolves
// or rejects at once. A decision's latency is the wall time of that one call, its store round trips included.
// hostpace's store is wrapped to count its calls (`timeMs`, `get`, `compareAndSet`, `set`) per decision and the
// compare-and-sets lost to another process. Each row is bounded: a fixed number of decisions per process and a
// time cap on the timed loop; the store is emptied (FLUSHALL) before each row.
//
// Diagnostic rows: one PING round trip (one process), and hostpace's store calls alone (`diag.store`: the
// compare-and-set of a record-sized value, again on the value found when it is lost, nothing decided) with 1, 4 and
// 16 processes on 10,000 hosts.
//
// Memory rows: one process makes one decision on each of 10,000 hosts with a policy whose record stays (a quota of
// 1000 per hour), then reads `MEMORY USAGE` of sampled keys and the `INFO memory` used_memory growth per host.
//
// Output: markdown tables on stdout (progress on stderr) and bench/results/redis.json. See bench/README.md.

import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from './common.mjs';

const SELF = fileURLToPath(import.meta.url);
const RATE = 2; // requests per second per host
const BURST = 2;
const HP_CONFIG = { ratePerSec: RATE, burstCapacity: BURST, robots: 'ignore' };
const RLF_CONFIG = { points: RATE, duration: 1 };
const MEMORY_HP_CONFIG = { ratePerSec: RATE, burstCapacity: BURST, robots: 'ignore', quota: { limit: 1000, windowSec: 3600 } };
const MEMORY_RLF_CONFIG = { points: 1000, duration: 3600 };
const SEED = 0x5eed;
/** How long the store diagnostic's values live: about a record's life under HP_CONFIG (0.5 to 1 s). */
const STORE_TTL_MS = 750;
const PAGES = 8;
const CLIENT_OPTIONS = {
  host: '127.0.0.1',
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  lazyConnect: true,
};


if (process.argv[2] === '--child') await child(JSON.parse(process.argv[3]));
else await main();

// ---------------------------------------------------------------------------------------------------------------
// A child process: one limiter, one client; warm up, say ready, wait for go, decide, report.

async function child(o) {
  const orphaned = () => process.exit(1); // the parent is gone: so is the row
  process.on('disconnect', orphaned);
  const { Redis } = await import('ioredis5');
  const client = new Redis({ ...CLIENT_OPTIONS, port: o.port });
  client.on('error', () => {}); // a failing store shows in the counts (local decisions, errors)
  await client.connect();

  const hostIndex = new Uint32Array(o.decisions);
  {
    const rand = mulberry32(SEED + o.index);
    for (let k = 0; k < o.decisions; k++) hostIndex[k] = o.hosts === 1 ? 0 : Math.floor(rand() * o.hosts);
  }
  const counts = { timeMs: 0, get: 0, compareAndSet: 0, set: 0, casLost: 0 };
  const calls = () => counts.timeMs + counts.get + counts.compareAndSet + counts.set;
  let warnings = 0;
  let decide;
  if (o.library === 'hostpace') {
    const { SharedLimiter } = await import('../pkg/node.js');
    const { redisStore } = await import('../pkg/redis.js');
    const base = redisStore(client, { prefix: 'hp:' });
    // the store as the limiter sees it, counting its calls (plain functions: one more frame per call, no await)
    const store = {
      timeMs: () => (counts.timeMs++, base.timeMs()),
      get: (key) => (counts.get++, base.get(key)),
      set: (key, value, ttlMs) => (counts.set++, base.set(key, value, ttlMs)),
      compareAndSet: (key, expected, value, ttlMs) => {
        counts.compareAndSet++;
        return base.compareAndSet(key, expected, value, ttlMs).then((answer) => {
          if (!answer.ok) counts.casLost++;
          return answer;
        });
      },
    };
    const limiter = new SharedLimiter({
      ...HP_CONFIG,
      store,
      fleetSize: o.processes,
      onStoreWarning: () => warnings++,
    });
    const urls = Array.from({ length: o.hosts }, (_, h) => `https://host${h}.example/page/`);
    decide = async (k, h) => (await limiter.acquire(urls[h] + (k & (PAGES - 1)))).waitMs === 0;
    // warm-up on hosts of this process's own (no contention): the clock's first samples, the script cached by
    // the server, the code compiled
    for (let i = 0; i < o.warmup; i++) await limiter.acquire(`https://warm${o.index}-${i % 64}.example/`);
  } else if (o.library === 'rlf') {
    const { RateLimiterRedis } = await import('rate-limiter-flexible');
    const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', ...RLF_CONFIG });
    const hosts = Array.from({ length: o.hosts }, (_, h) => `host${h}.example`);
    decide = (k, h) =>
      rl.consume(hosts[h]).then(
        () => true,
        (e) => {
          if (e instanceof Error) throw e;
          return false; // a RateLimiterRes: limited
        },
      );
    for (let i = 0; i < o.warmup; i++) await decide(0, 0).catch(() => {});
    await client.del(`rlf:host0.example`);
  } else if (o.library === 'store') {
    // hostpace's store calls alone, without a decision: redisStore's compare-and-set of a record-sized value on the
    // row's hosts, expecting what this process last wrote (until it expires) or found (none at first), again on
    // the value found when another process wrote first, as SharedLimiter does; the value lives STORE_TTL_MS
    const { redisStore } = await import('../pkg/redis.js');
    const store = redisStore(client, { prefix: 'st:' });
    const keys = Array.from({ length: o.hosts }, (_, h) => `host:host${h}.example`);
    const last = new Map();
    let written = 0;
    const value = () => `hpr 8 ${String(++written).padStart(19, '0')} 13:host0.example 500000001 1 ~4 1 ~28`;
    decide = async (k, h) => {
      for (;;) {
        counts.compareAndSet++;
        const next = value();
        const known = last.get(h);
        const expected = known !== undefined && performance.now() < known.until ? known.value : null;
        const sent = performance.now();
        const answer = await store.compareAndSet(keys[h], expected, next, STORE_TTL_MS);
        if (answer.ok) return last.set(h, { value: next, until: sent + STORE_TTL_MS });
        counts.casLost++;
        last.set(h, { value: answer.current, until: Infinity });
      }
    };
    for (let i = 0; i < o.warmup; i++) await store.compareAndSet(`warm${o.index}`, null, value(), 1);
  } else {
    // the floor: one PING round trip on the same client
    decide = async () => (await client.ping()) === 'PONG';
    for (let i = 0; i < o.warmup; i++) await decide();
  }

  for (const k of Object.keys(counts)) counts[k] = 0; // the warm-up's calls are not counted
  warnings = 0;
  process.send({ ready: true });
  await new Promise((resolve) => process.once('message', resolve));

  const latUs = new Float64Array(o.decisions);
  // hostpace: the store calls of each decision (0: decided on this process's own share, the store given up on)
  const callsOf = new Uint8Array(o.decisions);
  const callsHist = {}; // store calls in one decision → decisions
  const byKind = { first: { n: 0, calls: 0 }, again: { n: 0, calls: 0 }, uncontended: { n: 0, one: 0, calls: 0 } };
  const seen = new Uint8Array(o.hosts);
  let go = 0;
  let errors = 0;
  let firstError;
  let local = 0;
  let n = 0;
  const cpu0 = process.cpuUsage();
  const startMs = performance.timeOrigin + performance.now();
  const deadline = performance.now() + o.capMs;
  for (let k = 0; k < o.decisions; k++) {
    if ((k & 15) === 0 && performance.now() > deadline) break;
    const h = hostIndex[k];
    const c0 = calls();
    const lost0 = counts.casLost;
    const t0 = performance.now();
    try {
      if (await decide(k, h)) go++;
    } catch (e) {
      errors++;
      firstError ??= String(e?.message ?? e);
    }
    latUs[k] = (performance.now() - t0) * 1000;
    n++;
    if (o.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, o.pauseMs));
    if (o.library === 'hostpace') {
      const c = calls() - c0;
      callsOf[k] = Math.min(c, 255);
      callsHist[c] = (callsHist[c] ?? 0) + 1;
      if (c === 0) local++;
      const kind = seen[h] ? byKind.again : byKind.first;
      kind.n++;
      kind.calls += c;
      if (seen[h] && counts.casLost === lost0 && c > 0) {
        byKind.uncontended.n++;
        byKind.uncontended.calls += c;
        if (c === 1) byKind.uncontended.one++;
      }
      seen[h] = 1;
    }
  }
  const endMs = performance.timeOrigin + performance.now();
  const cpu = process.cpuUsage(cpu0);
  // sent before this process lets go of the channel: a row's report is large (every latency), and a
  // disconnect right after a send may lose it
  await new Promise((resolve) => process.send({
    done: true,
    index: o.index,
    decisions: n,
    capped: n < o.decisions,
    startMs,
    endMs,
    go,
    errors,
    firstError,
    cpuUs: cpu.user + cpu.system,
    latUs: Array.from(latUs.subarray(0, n), (x) => Math.round(x * 10) / 10),
    ...(o.library === 'hostpace' ? { callsOf: Array.from(callsOf.subarray(0, n)) } : {}),
    ...(o.library === 'hostpace' ? { counts, callsHist, byKind, local, warnings } : {}),
    ...(o.library === 'store' ? { counts } : {}),
  }, resolve));
  client.disconnect();
  process.off('disconnect', orphaned);
  process.disconnect();
}

// ---------------------------------------------------------------------------------------------------------------
// The parent: the server, the rows, the report.

async function main() {
  const args = process.argv.slice(2);
  const QUICK = args.includes('--quick');
  const ONLY = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
  const PAUSE = args.find((a) => a.startsWith('--pause-ms='))?.slice('--pause-ms='.length);
  const PAUSE_MS = PAUSE === undefined ? 0 : Number(PAUSE);
  for (const a of args) {
    const known = a === '--quick' || a.startsWith('--only=') || a.startsWith('--pause-ms=');
    const pause = !a.startsWith('--pause-ms=') || (Number.isInteger(PAUSE_MS) && PAUSE_MS >= 0 && PAUSE_MS <= 1000);
    if (!known || !pause) {
      const usage = 'usage: node bench/redis.mjs [--quick] [--only=a,b] [--pause-ms=0..1000]';
      process.stderr.write(`redis.mjs: ${known ? 'bad value' : 'unknown argument'} ${a}\n${usage}\n`);
      process.exit(2);
    }
  }
  const SCALE = QUICK ? 0.1 : 1;
  const DECISIONS_PER_ROW = Math.round(96_000 * SCALE); // shared out among the row's processes
  const CAP_MS = QUICK ? 3_000 : 20_000; // the timed loop of each process stops there
  const WARMUP = QUICK ? 300 : 500; // decisions per process before the timed loop (untimed)
  const ROW_BOUND_MS = CAP_MS + 60_000; // a row whose processes have not reported by then is killed
  const HOSTS_MANY = 10_000;
  const MEMORY_HOSTS = 10_000;
  const MEMORY_SAMPLES = 200;
  const PROCESSES = [1, 4, 16];
  const started = performance.now();
  const log = (s) => process.stderr.write(`${s}\n`);

  const { startRedis } = await import('../tests/support/redis.mjs');
  const { environment } = await import('./common.mjs');
  const { Redis } = await import('ioredis5');
  const { SharedLimiter } = await import('../pkg/node.js');
  const { redisStore } = await import('../pkg/redis.js');
  const { RateLimiterRedis } = await import('rate-limiter-flexible');

  const server = await startRedis();
  log(`redis-server PID ${server.pid} on 127.0.0.1:${server.port}`);
  const admin = new Redis({ ...CLIENT_OPTIONS, port: server.port });
  admin.on('error', () => {});
  await admin.connect();
  const serverVersion = (await admin.info('server')).match(/redis_version:(\S+)/)?.[1];
  const info = async (section) => {
    const out = {};
    for (const line of (await admin.info(section)).split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
    }
    return out;
  };
  const serverCpuUs = async () => {
    const c = await info('cpu');
    return (Number(c.used_cpu_user) + Number(c.used_cpu_sys)) * 1e6;
  };

  const children = new Set();
  const results = [];
  const memory = [];
  const diags = [];

  // one row: `processes` children of `library` on `hosts` hosts
  async function row(library, processes, hosts) {
    const id = `${library}.p${processes}.${hosts === 1 ? '1host' : `${hosts / 1000}khosts`}`;
    await admin.flushall();
    const perProcess = Math.ceil(DECISIONS_PER_ROW / processes);
    const procs = [];
    for (let index = 0; index < processes; index++) {
      const options = {
        library, processes, hosts, index, port: server.port, decisions: perProcess, capMs: CAP_MS, warmup: WARMUP,
        pauseMs: PAUSE_MS,
      };
      const cp = fork(SELF, ['--child', JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.add(cp);
      const messages = [];
      const waiters = [];
      cp.on('message', (m) => (waiters.length ? waiters.shift()(m) : messages.push(m)));
      const exited = new Promise((resolve) => cp.once('exit', (code, signal) => resolve({ code, signal })));
      exited.then(() => children.delete(cp));
      const next = () =>
        Promise.race([
          messages.length ? messages.shift() : new Promise((resolve) => waiters.push(resolve)),
          exited.then(({ code, signal }) => {
            throw new Error(`${id}: process ${index} (PID ${cp.pid}) exited (${code ?? signal}) before reporting`);
          }),
        ]);
      procs.push({ cp, next, exited });
    }
    let timer;
    const bound = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${id}: not done within ${ROW_BOUND_MS / 1000} s`)), ROW_BOUND_MS);
    });
    try {
      await Promise.race([Promise.all(procs.map((p) => p.next())), bound]); // ready
      await admin.config('RESETSTAT');
      const cpu0 = await serverCpuUs();
      for (const p of procs) p.cp.send('go');
      const reports = await Promise.race([Promise.all(procs.map((p) => p.next())), bound]);
      const serverCpu = (await serverCpuUs()) - cpu0;
      const stats = await info('commandstats');
      await Promise.race([Promise.all(procs.map((p) => p.exited)), bound]);
      return summarise(id, library, processes, hosts, perProcess, reports, stats, serverCpu);
    } finally {
      clearTimeout(timer);
      for (const p of procs) if (p.cp.exitCode === null && p.cp.signalCode === null) p.cp.kill('SIGKILL');
    }
  }

  function summarise(id, library, processes, hosts, perProcess, reports, stats, serverCpuUs) {
    const lat = new Float64Array(reports.reduce((s, r) => s + r.latUs.length, 0));
    let at = 0;
    for (const r of reports) for (const x of r.latUs) lat[at++] = x;
    lat.sort();
    const quantile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : null);
    const q = (p) => quantile(lat, p);
    const decisions = reports.reduce((s, r) => s + r.decisions, 0);
    const wallMs = Math.max(...reports.map((r) => r.endMs)) - Math.min(...reports.map((r) => r.startMs));
    const commands = {};
    for (const [k, v] of Object.entries(stats)) {
      if (!k.startsWith('cmdstat_')) continue;
      const m = v.match(/calls=(\d+),usec=(\d+)/);
      if (m) commands[k.slice(8)] = { calls: Number(m[1]), usec: Number(m[2]) };
    }
    for (const k of Object.keys(commands)) if (k === 'info' || k.startsWith('config')) delete commands[k]; // the parent's
    // scripts run by the server (EVALSHA, or EVAL when its cache lacked the script): one per round trip of either
    // library's decision; the commands a script runs are counted by the server too (get, set, incrby, pttl)
    const scripts = (commands.evalsha?.calls ?? 0) + (commands.eval?.calls ?? 0);
    const out = {
      id,
      library,
      processes,
      hosts,
      decisions,
      decisionsPerProcess: perProcess,
      cappedProcesses: reports.filter((r) => r.capped).length,
      wallMs: +wallMs.toFixed(1),
      perSec: Math.round((decisions / wallMs) * 1000),
      p50Us: q(0.5),
      p90Us: q(0.9),
      p99Us: q(0.99),
      maxUs: lat.length ? lat[lat.length - 1] : null,
      meanUs: +(lat.reduce((s, x) => s + x, 0) / lat.length).toFixed(1),
      goNowShare: +(reports.reduce((s, r) => s + r.go, 0) / decisions).toFixed(4),
      errors: reports.reduce((s, r) => s + r.errors, 0),
      firstError: reports.find((r) => r.firstError)?.firstError,
      clientCpuUsPerDecision: +(reports.reduce((s, r) => s + r.cpuUs, 0) / decisions).toFixed(1),
      serverCpuUsPerDecision: +(serverCpuUs / decisions).toFixed(1),
      serverScriptsPerDecision: +(scripts / decisions).toFixed(3),
      serverCommands: commands,
    };
    const sum = (f) => reports.reduce((s, r) => s + f(r), 0);
    if (library === 'store') {
      const cas = sum((r) => r.counts.compareAndSet);
      Object.assign(out, { storeCallsPerDecision: +(cas / decisions).toFixed(3), casLost: sum((r) => r.counts.casLost) });
    }
    if (library === 'hostpace') {
      const storeCalls = {};
      for (const k of ['timeMs', 'get', 'compareAndSet', 'set']) storeCalls[k] = sum((r) => r.counts[k]);
      const hist = {};
      for (const r of reports) for (const [c, m] of Object.entries(r.callsHist)) hist[c] = (hist[c] ?? 0) + m;
      const kind = (name) => {
        const n = sum((r) => r.byKind[name].n);
        return { decisions: n, storeCallsPerDecision: n ? +(sum((r) => r.byKind[name].calls) / n).toFixed(3) : null };
      };
      const un = sum((r) => r.byKind.uncontended.n);
      // latency of the decisions made through the store (at least one store call), apart from the local ones
      const through = [];
      for (const r of reports) r.callsOf.forEach((c, i) => c > 0 && through.push(r.latUs[i]));
      through.sort((a, b) => a - b);
      Object.assign(out, {
        storeCalls,
        storeCallsPerDecision: +(Object.values(storeCalls).reduce((s, x) => s + x, 0) / decisions).toFixed(3),
        storeCallsHistogram: hist,
        casLost: sum((r) => r.counts.casLost),
        casLostPerDecision: +(sum((r) => r.counts.casLost) / decisions).toFixed(3),
        localDecisions: sum((r) => r.local),
        throughStore: { decisions: through.length, p50Us: quantile(through, 0.5), p99Us: quantile(through, 0.99) },
        storeWarnings: sum((r) => r.warnings),
        firstTouch: kind('first'),
        again: kind('again'),
        uncontended: {
          decisions: un,
          storeCallsPerDecision: un ? +(sum((r) => r.byKind.uncontended.calls) / un).toFixed(3) : null,
          shareWithOneCall: un ? +(sum((r) => r.byKind.uncontended.one) / un).toFixed(4) : null,
        },
      });
    }
    return out;
  }

  // memory per host: one decision on each of `n` hosts from this process, `inFlight` at once (never two on a host)
  async function memoryRow(library) {
    await admin.flushall();
    const client = new Redis({ ...CLIENT_OPTIONS, port: server.port });
    client.on('error', () => {});
    await client.connect();
    let decide;
    let keyOf;
    let limiter;
    if (library === 'hostpace') {
      limiter = new SharedLimiter({ ...MEMORY_HP_CONFIG, store: redisStore(client, { prefix: 'hp:' }), fleetSize: 1 });
      decide = (h) => limiter.acquire(`https://host${h}.example/page/0`);
      keyOf = (h) => `hp:host:host${h}.example`;
    } else {
      const rl = new RateLimiterRedis({ storeClient: client, keyPrefix: 'rlf', ...MEMORY_RLF_CONFIG });
      decide = (h) => rl.consume(`host${h}.example`);
      keyOf = (h) => `rlf:host${h}.example`;
    }
    await decide(-1); // the first call (clock samples, script load) and its key, removed before the measure
    await admin.del(keyOf(-1));
    const before = Number((await info('memory')).used_memory);
    const keys0 = await admin.dbsize();
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let h; (h = next++) < MEMORY_HOSTS; ) await decide(h);
      }),
    );
    const ms = performance.now() - t0;
    const after = Number((await info('memory')).used_memory);
    const keys = (await admin.dbsize()) - keys0;
    let usage = 0;
    let valueBytes = 0;
    let keyBytes = 0;
    const step = Math.floor(MEMORY_HOSTS / MEMORY_SAMPLES);
    for (let i = 0; i < MEMORY_SAMPLES; i++) {
      const key = keyOf(i * step);
      usage += Number(await admin.memory('USAGE', key, 'SAMPLES', '0'));
      valueBytes += Number(await admin.strlen(key));
      keyBytes += Buffer.byteLength(key);
    }
    limiter?.free();
    client.disconnect();
    return {
      id: `memory.${library}`,
      library,
      config: library === 'hostpace' ? MEMORY_HP_CONFIG : MEMORY_RLF_CONFIG,
      hosts: MEMORY_HOSTS,
      keys,
      ms: Math.round(ms),
      usedMemoryBytesPerHost: +((after - before) / MEMORY_HOSTS).toFixed(1),
      memoryUsageBytesPerKey: +(usage / MEMORY_SAMPLES).toFixed(1),
      valueBytesPerKey: +(valueBytes / MEMORY_SAMPLES).toFixed(1),
      keyBytesPerKey: +(keyBytes / MEMORY_SAMPLES).toFixed(1),
      sampledKeys: MEMORY_SAMPLES,
    };
  }

  const wanted = (id) => !ONLY || ONLY.some((part) => id.includes(part));
  let failed;
  try {
    // a diagnostic row, reported apart from the pairs
    const diagnostic = async (id, library, processes, hosts) => {
      if (!wanted(id)) return;
      const d = await row(library, processes, hosts);
      d.id = id;
      diags.push(d);
      log(
        `${d.id}: p50 ${d.p50Us} µs, p99 ${d.p99Us} µs, ${d.perSec}/s, CPU per decision ` +
          `${d.clientCpuUsPerDecision} µs (client) + ${d.serverCpuUsPerDecision} µs (server)` +
          (d.storeCallsPerDecision !== undefined ? `, ${d.storeCallsPerDecision} store calls/decision` : ''),
      );
    };
    // each pair of rows (hostpace, then rate-limiter-flexible, in alternating order) runs back to back, so that
    // their ratio is taken seconds apart on a machine whose speed drifts
    let flip = false;
    for (const hosts of [1, HOSTS_MANY]) {
      for (const processes of PROCESSES) {
        const order = flip ? ['rlf', 'hostpace'] : ['hostpace', 'rlf'];
        flip = !flip;
        // on 10,000 hosts, the store's part alone right after the pair (see `diagnostic`)
        if (hosts === HOSTS_MANY) order.push('store');
        for (const library of order) {
          if (library === 'store') {
            await diagnostic(`diag.store.p${processes}.10khosts`, 'store', processes, hosts);
            continue;
          }
          const id = `${library}.p${processes}.${hosts === 1 ? '1host' : `${hosts / 1000}khosts`}`;
          if (!wanted(id)) continue;
          const r = await row(library, processes, hosts);
          results.push(r);
          log(
            `${r.id}: ${r.decisions} decisions in ${(r.wallMs / 1000).toFixed(2)} s, ${r.perSec}/s, p50 ${r.p50Us} µs, ` +
              `p99 ${r.p99Us} µs, CPU per decision ${r.clientCpuUsPerDecision} µs (clients) + ` +
              `${r.serverCpuUsPerDecision} µs (server)` +
              (r.storeCallsPerDecision !== undefined ? `, ${r.storeCallsPerDecision} store calls/decision, ${r.casLost} CAS lost, ${r.localDecisions} local` : '') +
              (r.errors ? `, ${r.errors} errors (${r.firstError})` : ''),
          );
        }
      }
    }
    await diagnostic('diag.ping.p1', 'ping', 1, 1);
    for (const library of ['hostpace', 'rlf']) {
      if (!wanted(`memory.${library}`)) continue;
      const m = await memoryRow(library);
      memory.push(m);
      log(`${m.id}: ${m.usedMemoryBytesPerHost} B/host (used_memory), MEMORY USAGE ${m.memoryUsageBytesPerKey} B/key, value ${m.valueBytesPerKey} B`);
    }
  } catch (e) {
    failed = e;
  } finally {
    for (const cp of children) cp.kill('SIGKILL');
    admin.disconnect();
    await server.stop();
    let alive = true;
    try {
      process.kill(server.pid, 0);
    } catch {
      alive = false;
    }
    log(`redis-server PID ${server.pid} ${alive ? 'STILL RUNNING' : 'stopped'}`);
  }
  if (failed) throw failed;

  // --- the report
  const pair = (processes, hosts) => {
    const hp = results.find((r) => r.library === 'hostpace' && r.processes === processes && r.hosts === hosts);
    const rlf = results.find((r) => r.library === 'rlf' && r.processes === processes && r.hosts === hosts);
    if (!hp || !rlf) return null;
    return {
      processes,
      hosts,
      perSecRatio: +(hp.perSec / rlf.perSec).toFixed(3),
      p50Ratio: +(hp.p50Us / rlf.p50Us).toFixed(3),
      p99Ratio: +(hp.p99Us / rlf.p99Us).toFixed(3),
    };
  };
  const ratios = [];
  for (const hosts of [1, HOSTS_MANY]) for (const processes of PROCESSES) {
    const p = pair(processes, hosts);
    if (p) ratios.push(p);
  }
  const lines = [
    '| row | processes | hosts | decisions | decisions/s | p50 µs | p99 µs | store calls / decision | CAS lost | go now |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of [...results, ...diags]) {
    lines.push(
      `| ${r.id} | ${r.processes} | ${r.hosts} | ${r.decisions} | ${r.perSec} | ${r.p50Us} | ${r.p99Us} | ` +
        `${r.storeCallsPerDecision ?? '–'} | ${r.casLost ?? '–'} | ${(r.goNowShare * 100).toFixed(1)} % |`,
    );
  }
  if (ratios.length) {
    lines.push('', '| processes | hosts | decisions/s hostpace ÷ rlf | p50 hostpace ÷ rlf | p99 hostpace ÷ rlf |', '|---:|---:|---:|---:|---:|');
    for (const p of ratios) lines.push(`| ${p.processes} | ${p.hosts} | ${p.perSecRatio} | ${p.p50Ratio} | ${p.p99Ratio} |`);
  }
  if (memory.length) {
    lines.push('', '| row | hosts | keys | used_memory B/host | MEMORY USAGE B/key | value B | key B |', '|---|---:|---:|---:|---:|---:|---:|');
    for (const m of memory) {
      lines.push(`| ${m.id} | ${m.hosts} | ${m.keys} | ${m.usedMemoryBytesPerHost} | ${m.memoryUsageBytesPerKey} | ${m.valueBytesPerKey} | ${m.keyBytesPerKey} |`);
    }
  }
  console.log(lines.join('\n'));
  const totalSeconds = +((performance.now() - started) / 1000).toFixed(1);
  if (ONLY || PAUSE_MS > 0) {
    log(`${ONLY ? '--only' : '--pause-ms'}: nothing written (${totalSeconds} s)`);
    return;
  }
  const out = {
    ...environment('redis', QUICK),
    redisServer: serverVersion,
    client: 'ioredis 5 (enableOfflineQueue: false), one per process',
    workload: {
      decisionsPerRow: DECISIONS_PER_ROW,
      capMsPerProcess: CAP_MS,
      warmupPerProcess: WARMUP,
      processes: PROCESSES,
      hosts: [1, HOSTS_MANY],
      sequence: `mulberry32(seed ${SEED} + process index) host index per decision; URL = https://host<h>.example/page/<k mod ${PAGES}>`,
      hostpaceConfig: HP_CONFIG,
      rlfConfig: RLF_CONFIG,
      oneAtATimePerProcess: true,
      memory: { hosts: MEMORY_HOSTS, sampledKeys: MEMORY_SAMPLES, hostpaceConfig: MEMORY_HP_CONFIG, rlfConfig: MEMORY_RLF_CONFIG },
    },
    goals: { storeCallsPerUncontendedDecision: 1, p50RatioToRlf: 1.5, bytesPerHost: 300 },
    results,
    diagnostics: diags,
    ratios,
    memory,
    totalSeconds,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/redis.json', import.meta.url), JSON.stringify(out, null, 2) + '\n');
  log(`wrote bench/results/redis.json (${totalSeconds} s)`);
}
