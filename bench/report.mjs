#!/usr/bin/env node
// BENCHMARKS.md from the benchmarks' outputs: every figure in that file comes from here.
//
//   node bench/report.mjs > BENCHMARKS.md
//   node bench/report.mjs --criterion DIR --results DIR --pkg FILE --worker-wasm FILE > BENCHMARKS.md
//   cargo bench --bench memory | node bench/report.mjs --parse-memory > bench/results/memory.json
//
// Inputs (each optional: a missing one makes its section say "not measured" with the command that measures it,
// and its goals "not measured"):
//   bench/results/decisions.json      node bench/decisions.mjs
//   bench/results/frontier.json       node --expose-gc bench/frontier.mjs
//   bench/results/memory.json         cargo bench --bench memory | node bench/report.mjs --parse-memory > …
//   bench/results/workerd-floor.md    node bench/workerd-floor/run.mjs > bench/results/workerd-floor.md
//   bench/results/workerd-floor-site.md  HOSTPACE_BENCH_GROUP_BY=site node bench/workerd-floor/run.mjs > (that file)
//   bench/results/nginx.json          node bench/nginx.mjs
//   bench/results/redis.json          node bench/redis.mjs
//   <criterion>/**/new/estimates.json cargo bench --bench core, then node bench/report.mjs --save-criterion
//                                     (criterion's own output, copied from $CRITERION_HOME, else
//                                     $CARGO_TARGET_DIR/criterion, else target/criterion; benchmark.json beside it
//                                     names the benchmark). <criterion> is --criterion DIR, else
//                                     bench/results/criterion
//   pkg/hostpace_bg.wasm              npm run build:pkg (gzipped here with zlib level 9, as the size test does)
//   worker/build/index_bg.wasm        scripts/build-worker.sh
// The machine described is the one the report runs on (/proc/cpuinfo, /proc/meminfo, `rustc --version`, Node);
// each result file's own record of where and when it was measured is printed beside its table, and a mismatch is
// pointed out. No dependencies.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import os from 'node:os';

const root = new URL('../', import.meta.url).pathname;
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  if (i + 1 >= args.length) usage(`${name} needs a value`);
  return args[i + 1];
};
function usage(problem) {
  if (problem) process.stderr.write(`report.mjs: ${problem}\n`);
  process.stderr.write(
    'usage: node bench/report.mjs [--results DIR] [--criterion DIR] [--pkg FILE] [--worker-wasm FILE] > BENCHMARKS.md\n' +
      '       cargo bench --bench memory | node bench/report.mjs --parse-memory > bench/results/memory.json\n',
  );
  process.exit(problem ? 2 : 0);
}
if (args.includes('--help') || args.includes('-h')) usage();
const known = ['--results', '--criterion', '--pkg', '--worker-wasm', '--parse-memory', '--save-criterion'];
for (let i = 0; i < args.length; i++) {
  if (!known.includes(args[i])) usage(`unknown argument ${args[i]}`);
  if (args[i] !== '--parse-memory' && args[i] !== '--save-criterion') i++;
}

// ---------------------------------------------------------------------------------------------------------------
// --parse-memory: the memory bench's printed lines to bench/results/memory.json.

if (args.includes('--parse-memory')) {
  const text = readFileSync(0, 'utf8');
  const num = (re) => {
    const m = text.match(re);
    return m ? Number(m[1].replace(/,/g, '')) : null;
  };
  const out = {
    benchmark: 'memory',
    date: new Date().toISOString(),
    command: 'cargo bench --bench memory',
    hosts: num(/hostpace Registry, (\d+) hosts/),
    hostStateBytes: num(/size_of::<HostState>\(\) = (\d+) bytes/),
    averageKeyBytes: num(/average key length = ([\d.]+) bytes/),
    registryHeapBytesPerHost: num(/hostpace Registry, \d+ hosts: ([\d.]+) heap bytes per host/),
    registryHeapMB: num(/heap bytes per host[^,]*, ([\d.]+) MB heap/),
    registryRssGrowthMB: num(/RSS \+([\d.]+) MB/),
    governorHeapBytesPerKey: num(/governor keyed, \d+ keys: ([\d.]+) heap bytes per key/),
    processRssMB: num(/process RSS at the end: ([\d.]+) MB/),
  };
  const missing = Object.entries(out).filter(([, v]) => v === null).map(([k]) => k);
  if (missing.length) {
    process.stderr.write(`report.mjs --parse-memory: not found in the input: ${missing.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs.

const resultsDir = resolve(opt('--results') ?? join(root, 'bench/results'));
// given paths are the caller's (relative to the working directory); criterion's defaults are cargo's (relative to
// the package root, where `cargo bench` runs the bench)
const cargoCriterion = resolve(
  root,
  process.env.CRITERION_HOME ??
    (process.env.CARGO_TARGET_DIR ? join(process.env.CARGO_TARGET_DIR, 'criterion') : 'target/criterion'),
);
// the committed copy of criterion's estimates (bench/results/criterion, written by --save-criterion) is read
// unless --criterion names another folder
const criterionDir = opt('--criterion') ? resolve(opt('--criterion')) : join(resultsDir, 'criterion');
const pkgWasm = resolve(opt('--pkg') ?? join(root, 'pkg/hostpace_bg.wasm'));
const workerWasm = resolve(opt('--worker-wasm') ?? join(root, 'worker/build/index_bg.wasm'));
const rel = (p) => (p.startsWith(root) ? p.slice(root.length) : p);

// --save-criterion: copy criterion's estimates (every `new/estimates.json` and `new/benchmark.json`) from cargo's
// target folder into bench/results/criterion, so that the report reads committed figures.
if (args.includes('--save-criterion')) {
  const { cpSync, mkdirSync, rmSync } = await import('node:fs');
  const out = join(resultsDir, 'criterion');
  rmSync(out, { recursive: true, force: true });
  let copied = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\/new\/(estimates|benchmark)\.json$/.test(path)) {
        const to = join(out, path.slice(cargoCriterion.length));
        mkdirSync(join(to, '..'), { recursive: true });
        cpSync(path, to);
        copied++;
      }
    }
  };
  if (existsSync(cargoCriterion)) walk(cargoCriterion);
  process.stderr.write(`report.mjs: ${copied} criterion files copied to ${rel(out)}\n`);
  process.exit(copied > 0 ? 0 : 1);
}

function readJson(file) {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    process.stderr.write(`report.mjs: ${rel(file)} is not JSON (${e.message}); treated as missing\n`);
    return null;
  }
}
const decisions = readJson(join(resultsDir, 'decisions.json'));
const frontier = readJson(join(resultsDir, 'frontier.json'));
const memory = readJson(join(resultsDir, 'memory.json'));
const playground = readJson(join(resultsDir, 'playground.json'));
const nginxBench = readJson(join(resultsDir, 'nginx.json'));
const redisBench = readJson(join(resultsDir, 'redis.json'));
const floorFile = join(resultsDir, 'workerd-floor.md');
const floorSiteFile = join(resultsDir, 'workerd-floor-site.md');

// criterion: every `new/estimates.json`, named by the `benchmark.json` beside it (or by its directories)
function criterionResults(dir) {
  const found = [];
  const walk = (d) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const p = join(d, e.name);
      if (e.name === 'new' && existsSync(join(p, 'estimates.json'))) {
        const est = readJson(join(p, 'estimates.json'));
        const bench = readJson(join(p, 'benchmark.json'));
        const parts = p.slice(dir.length + 1).split('/').slice(0, -1);
        const typical = est?.slope ?? est?.mean;
        if (!typical || typeof typical.point_estimate !== 'number') continue;
        found.push({
          group: bench?.group_id ?? parts[0],
          func: bench?.function_id ?? parts[1] ?? '',
          value: bench?.value_str ?? parts[2] ?? null,
          ns: typical.point_estimate,
          lo: typical.confidence_interval?.lower_bound,
          hi: typical.confidence_interval?.upper_bound,
          mtime: statSync(join(p, 'estimates.json')).mtime,
        });
      } else if (e.name !== 'base' && e.name !== 'change' && e.name !== 'report') {
        walk(p);
      }
    }
  };
  walk(dir);
  return found;
}
const criterion = criterionResults(criterionDir);

function wasmSize(file) {
  if (!existsSync(file)) return null;
  const bytes = readFileSync(file);
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    mtime: statSync(file).mtime,
  };
}
const pkg = wasmSize(pkgWasm);
const worker = wasmSize(workerWasm);

// a size budget as its test states it (bytes: `BUDGET = 96_000`, `BUDGET = 96 * 1000`, `<= 300 * 1000`), else the
// given default
function budgetFrom(testFile, fallback) {
  let text;
  try {
    text = readFileSync(join(root, testFile), 'utf8');
  } catch {
    return fallback;
  }
  const m = text.match(/BUDGET\s*=\s*([\d_]+(?:\s*\*\s*[\d_]+)*)/) ?? text.match(/<=\s*([\d_]+(?:\s*\*\s*[\d_]+)*)/);
  const bytes = m ? m[1].split('*').reduce((acc, n) => acc * Number(n.trim().replace(/_/g, '')), 1) : NaN;
  return Number.isFinite(bytes) && bytes >= 1000 ? bytes : fallback;
}
const PKG_BUDGET = 128_000; // the project's goal for the package's wasm, gzipped
const PKG_TEST_BUDGET = budgetFrom('tests/js/size.test.mjs', PKG_BUDGET);
const WORKER_BUDGET = budgetFrom('tests/gateway/size.test.mjs', 310_000);

// ---------------------------------------------------------------------------------------------------------------
// The machine this report is generated on.

function sh(cmd, argv) {
  try {
    return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}
function machine() {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  let cores = os.cpus().length;
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    cpuModel = info.match(/^model name\s*:\s*(.+)$/m)?.[1].trim() ?? cpuModel;
    cores = (info.match(/^processor\s*:/gm) ?? []).length || cores;
  } catch {
    // not Linux: what Node says
  }
  let memGiB = os.totalmem() / 2 ** 30;
  try {
    const kb = Number(readFileSync('/proc/meminfo', 'utf8').match(/^MemTotal:\s*(\d+) kB/m)?.[1]);
    if (kb) memGiB = kb / 2 ** 20;
  } catch {
    // what Node says
  }
  return {
    cpuModel,
    cores,
    memGiB,
    rust: sh('rustc', ['--version']) ?? 'not found',
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    date: new Date(),
  };
}
const here = machine();

// ---------------------------------------------------------------------------------------------------------------
// Formatting.

const isNum = (x) => typeof x === 'number' && Number.isFinite(x);
const fmtInt = (x) => (isNum(x) ? Math.round(x).toLocaleString('en-US') : '?');
const fmt1 = (x) => (isNum(x) ? x.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }) : '?');
const fmt2 = (x) => (isNum(x) ? x.toFixed(2) : '?');
const ns = (x) => (x >= 1000 ? `${(x / 1000).toFixed(x >= 10_000 ? 1 : 2)} µs` : `${x.toFixed(x >= 100 ? 0 : 1)} ns`);
const day = (d) => new Date(d).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
const kb = (bytes) => (bytes % 1024 === 0 && bytes % 1000 !== 0 ? `${bytes / 1024} KiB` : `${+(bytes / 1000).toFixed(1)} KB`);
const yes = (b) => (b === null || b === undefined ? 'not measured' : b ? 'yes' : '**no**');
const esc = (s) => String(s).replace(/\|/g, '\\|');

// where a result file says it was measured, and whether that is this machine
function provenance(r) {
  const where = `${r.cpuModel ?? 'unknown CPU'}, ${r.cpus ?? '?'} cores, Node ${r.node ?? '?'}`;
  const notes = [];
  if (r.quick) notes.push('**a `--quick` run (a tenth of the workload): not comparable with the goals**');
  if (r.cpuModel && (r.cpuModel !== here.cpuModel || r.cpus !== here.cores)) {
    notes.push('Its CPU model or core count differs from this machine\'s');
  }
  if (r.node && r.node !== here.node) notes.push(`Its Node differs from this machine's ${here.node}`);
  if (pkg && r.pkg?.wasmSha256 && r.pkg.wasmSha256 !== pkg.sha256) {
    notes.push('It measured another build of the package than `pkg/` holds now (the SHA-256 differs)');
  }
  const load = r.loadavgAtEnd ? `, load average at the end ${r.loadavgAtEnd.map((l) => l.toFixed(2)).join(' ')}` : '';
  const build = r.pkg ? `; package ${r.pkg.version}, wasm ${fmtInt(r.pkg.wasmBytes)} B, SHA-256 \`${r.pkg.wasmSha256.slice(0, 12)}…\`` : '';
  return `Measured ${day(r.date)} on ${where}${load}${build}.${notes.map((n) => ` ${n}.`).join('')}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Figures against the goals.

const goals = []; // { goal, figure, peer, ratio, met }

// criterion
const crit = (group, side, clock) =>
  criterion.find((c) => c.group === group && c.func.startsWith(side) && c.func.includes(`${clock} clock`));
const critCases = [
  { label: 'hot host', group: 'hot_host', goal: null },
  { label: '10,000 hosts', group: 'keyed_10000_hosts', goal: 2 },
  { label: '1,000,000 hosts', group: 'keyed_1000000_hosts', goal: 2 },
  // the quota binds (every host has used its quota): hostpace alone, as governor has no quota
  { label: '10,000 hosts, quota 1,000 an hour, used', group: 'keyed_quota_1000_per_hour_10000_hosts', goal: null, clocks: ['fake'] },
  { label: '1,000,000 hosts, quota 10 an hour, used', group: 'keyed_quota_10_per_hour_1000000_hosts', goal: null, clocks: ['fake'] },
];
const critRows = [];
for (const c of critCases) {
  for (const clock of c.clocks ?? ['fake', 'real']) {
    const h = crit(c.group, 'hostpace', clock);
    const g = crit(c.group, 'governor', clock);
    const ratio = h && g ? h.ns / g.ns : null;
    const met = c.goal === null || ratio === null ? null : ratio <= c.goal;
    critRows.push({ ...c, clock, h, g, ratio, met });
    if (c.goal !== null) {
      goals.push({
        goal: `native keyed decision, ${c.label}, ${clock} clock: time ≤ ${c.goal}× governor's keyed check`,
        figure: h ? ns(h.ns) : 'not measured',
        peer: g ? ns(g.ns) : 'not measured',
        ratio: ratio === null ? '–' : `${fmt2(ratio)}×`,
        met,
      });
    }
  }
}

// Node decisions
const byId = Object.fromEntries((decisions?.results ?? []).map((r) => [r.id, r]));
// The ratio of a comparison is its paired rounds' median when the run has them (decisions.mjs, "Paired rounds"),
// else the ratio of the two rows' medians in the table.
const dPaired = (id, peerId) => {
  const r = byId[id];
  const p = byId[peerId];
  const pr = (decisions?.paired ?? []).find((x) => x.row === id && x.peer === peerId);
  const ratio = pr ? pr.median : isNum(r?.perSecMedian) && isNum(p?.perSecMedian) ? r.perSecMedian / p.perSecMedian : null;
  return {
    figure: r ? `${fmtInt(r.perSecMedian)}/s` : 'not measured',
    peer: p ? `${fmtInt(p.perSecMedian)}/s` : 'not measured',
    ratio,
    ratioText:
      ratio === null
        ? '–'
        : pr
          ? `${fmt2(ratio)}× (median of ${pr.rounds} paired rounds, ${fmt2(pr.min)}–${fmt2(pr.max)}×)`
          : `${fmt2(ratio)}×`,
  };
};
const dGoal = (label, id, peerId, min) => {
  const c = dPaired(id, peerId);
  goals.push({
    goal: `${label} ≥ ${min}× \`${peerId}\` (decisions/s)`,
    figure: c.figure,
    peer: c.peer,
    ratio: c.ratioText,
    met: c.ratio === null || decisions?.quick ? null : c.ratio >= min,
  });
};
// The Node goals are measured with the caller's instants; the string path with the default clock is reported
// beside them, without a goal (`besideGoals`).
dGoal('Node, 10,000 hosts: `acquire(url, nowMs)`', 'hostpace.acquire.virtual', 'limiter.tryRemoveTokens+URL', 1.1);
dGoal('Node, 10,000 hosts: batched `acquireIds` with the caller\'s instants', 'hostpace.acquireIds.virtual', 'limiter.tryRemoveTokens', 3);
dGoal('Node, 10,000 hosts: per-call `acquireId` with the caller\'s instants', 'hostpace.acquireId.virtual', 'limiter.tryRemoveTokens', 1.2);
const clockPath = dPaired('hostpace.acquire.clock', 'limiter.tryRemoveTokens+URL');
const besideGoals =
  clockPath.ratio === null
    ? 'Beside the goals, without one: `acquire(url)` with the default clock, not measured (`node bench/decisions.mjs`).'
    : `Beside the goals, without one: \`acquire(url)\` with the default clock, ${clockPath.figure} against ` +
      `\`limiter.tryRemoveTokens+URL\`'s ${clockPath.peer}, ${clockPath.ratioText}. The Node goals are measured with the ` +
      'caller\'s instants; with the default clock hostpace reads `performance.now()` on every call, through a JS ' +
      'import, as the peer reads it.';

// frontier
{
  // a frontier result without its figures counts as not measured
  const f = isNum(frontier?.totalMs) && isNum(frontier?.peakRssMB) ? frontier : null;
  const goalMs = f?.goals?.ms ?? 2000;
  const goalMb = f?.goals?.mb ?? 200;
  goals.push({
    goal: `Frontier, 1M URLs over 100k hosts: push + drain < ${fmtInt(goalMs)} ms`,
    figure: f ? `${fmtInt(f.totalMs)} ms` : 'not measured',
    peer: '–',
    ratio: f ? `${fmt2(f.totalMs / goalMs)} of the limit` : '–',
    met: f && !f.quick ? f.totalMs < goalMs : null,
  });
  goals.push({
    goal: `Frontier: peak RSS < ${goalMb} MB`,
    figure: f ? `${fmt1(f.peakRssMB)} MB` : 'not measured',
    peer: '–',
    ratio: f ? `${fmt2(f.peakRssMB / goalMb)} of the limit` : '–',
    met: f && !f.quick ? f.peakRssMB < goalMb : null,
  });
}

// package size
goals.push({
  goal: `npm package: \`hostpace_bg.wasm\` ≤ ${kb(PKG_BUDGET)} gzipped`,
  figure: pkg ? `${fmtInt(pkg.gzip)} B` : 'not measured',
  peer: '–',
  ratio: pkg ? `${fmt2(pkg.gzip / PKG_BUDGET)} of the budget` : '–',
  met: pkg ? pkg.gzip <= PKG_BUDGET : null,
});

// the gateway beside the floor of its design (bench/workerd-floor/run.mjs): the timing rows, and the calls table
const FLOOR_GOAL = 1.25;
function floorTables(file = floorFile) {
  const [timings, calls = ''] = readFileSync(file, 'utf8').split(/\n\s*\n/);
  const rows = timings
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|\s*-/.test(l) && !/^\|\s*row\s*\|/.test(l))
    .map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  const over = (re) => {
    const r = rows.find((c) => re.test(c[0]));
    return r ? Number(r[3]) : null;
  };
  return { rows, calls, gw: over(/GET \/v1\/fetch/), floor: over(/SQLite write, then fetching/) };
}
const floorResults = existsSync(floorFile) ? floorTables() : null;
const floorSiteResults = existsSync(floorSiteFile) ? floorTables(floorSiteFile) : null;
{
  const f = floorResults;
  const measured = f && f.gw !== null && f.floor;
  goals.push({
    goal: `gateway: \`GET /v1/fetch\` p50 over a direct GET ≤ ${FLOOR_GOAL}× the floor row (workerd)`,
    figure: measured ? `${fmt2(f.gw)} ms` : 'not measured',
    peer: measured ? `${fmt2(f.floor)} ms` : '–',
    ratio: measured ? `${fmt2(f.gw / f.floor)}×` : '–',
    met: measured ? f.gw / f.floor <= FLOOR_GOAL : null,
  });
}

// a crawler against nginx limit_req (bench/nginx.mjs): rejections at 1x, rejections and the share of the site's
// allowed rate at 5x, without and with adaptive pacing
const nginxRows = Object.fromEntries((Array.isArray(nginxBench?.results) ? nginxBench.results : []).map((r) => [r.id, r]));
const nginxSiteRate = nginxBench?.workload?.site?.ratePerSec ?? 2;
const pct1 = (x) => (isNum(x) ? `${fmt1(x * 100)} %` : '?');
const pctGoal = (x) => `${+(x * 100).toFixed(1)} %`; // 0.1 → "10 %"
{
  const g1 = nginxBench?.goals?.['1x'] ?? { maxRejectedShare: 0 };
  const g5 = nginxBench?.goals?.['5x'] ?? { maxRejectedShare: 0.1, minAllowedRateShare: 0.7 };
  for (const id of ['1x', '1x+adaptive', '5x', '5x+adaptive', '5x+gateway']) {
    const r = nginxRows[id];
    const at5 = id.startsWith('5x');
    const crawler = at5 ? '10/s, burst 4' : '2/s, burst 1';
    const g = at5 ? g5 : g1;
    goals.push({
      goal:
        `nginx limit_req ${nginxSiteRate} r/s, crawler at ${at5 ? 5 : 1}× (${crawler}${id.endsWith('adaptive') ? ', adaptive' : ''}` +
        `${id.endsWith('gateway') ? ', through the gateway' : ''}): ` +
        (at5
          ? `≤ ${pctGoal(g.maxRejectedShare)} rejected and ≥ ${pctGoal(g.minAllowedRateShare)} of the allowed rate`
          : `${g.maxRejectedShare === 0 ? 'no request' : `≤ ${pctGoal(g.maxRejectedShare)}`} rejected`),
      figure: r ? `${fmtInt(r.rejected)} of ${fmtInt(r.requests)} rejected (${pct1(r.rejectedShare)})` : 'not measured',
      peer: '–',
      ratio: r ? `${pct1(r.allowedRateShare)} of the allowed rate` : '–',
      met: r && typeof r.met === 'boolean' ? r.met : null,
    });
  }
}

// a fleet on one Redis (bench/redis.mjs): store round trips per uncontended decision, p50 beside
// rate-limiter-flexible's RateLimiterRedis (1, 4 and 16 processes on 10,000 hosts; 1 on 1 host), Redis memory per host
const REDIS_GOALS = { storeCallsPerUncontendedDecision: 1, p50RatioToRlf: 1.5, bytesPerHost: 300, ...redisBench?.goals };
const redisRows = Array.isArray(redisBench?.results) ? redisBench.results : [];
const redisRow = (library, processes, hosts) =>
  redisRows.find((r) => r.library === library && r.processes === processes && r.hosts === hosts);
const redisMemory = (library) => (Array.isArray(redisBench?.memory) ? redisBench.memory : []).find((m) => m.library === library);
const redisHostsLabel = (hosts) => (hosts === 1 ? '1 host' : `${fmtInt(hosts)} hosts`);
const redisUncontended = () => {
  // every hostpace row's decisions on a host the process had decided before, with no compare-and-set lost
  const rows = redisRows.filter((r) => r.library === 'hostpace' && r.uncontended?.decisions > 0);
  if (!rows.length) return null;
  const n = rows.reduce((a, r) => a + r.uncontended.decisions, 0);
  const calls = rows.reduce((a, r) => a + r.uncontended.storeCallsPerDecision * r.uncontended.decisions, 0);
  const one = rows.reduce((a, r) => a + r.uncontended.shareWithOneCall * r.uncontended.decisions, 0);
  return { n, perDecision: calls / n, oneShare: one / n, rows: rows.length };
};
{
  const quick = redisBench?.quick;
  const u = redisUncontended();
  goals.push({
    goal: `Redis fleet (\`SharedLimiter\`): store round trips per uncontended decision = ${REDIS_GOALS.storeCallsPerUncontendedDecision}`,
    figure: u ? `${fmt2(u.perDecision)} (${fmtInt(u.n)} decisions over ${u.rows} rows; ${pct1(u.oneShare)} with one)` : 'not measured',
    peer: u ? '1 (`RateLimiterRedis`: one script)' : '–',
    ratio: '–',
    met: u && !quick ? u.perDecision <= REDIS_GOALS.storeCallsPerUncontendedDecision : null,
  });
  // several processes on one host mix decisions through the store with local ones (contention): no like-for-like
  // p50 there, so those rows are in their section only
  for (const [processes, hosts] of [[1, 1], [1, 10_000], [4, 10_000], [16, 10_000]]) {
    const h = redisRow('hostpace', processes, hosts);
    const f = redisRow('rlf', processes, hosts);
    const ratio = isNum(h?.p50Us) && isNum(f?.p50Us) ? h.p50Us / f.p50Us : null;
    const who = processes === 1 ? '1 process' : `${processes} processes`;
    goals.push({
      goal: `Redis fleet, ${who}, ${redisHostsLabel(hosts)}: p50 per decision ≤ ${REDIS_GOALS.p50RatioToRlf}× \`RateLimiterRedis\``,
      figure: h ? `${fmtInt(h.p50Us)} µs` : 'not measured',
      peer: f ? `${fmtInt(f.p50Us)} µs` : 'not measured',
      ratio: ratio === null ? '–' : `${fmt2(ratio)}×`,
      met: ratio === null || quick ? null : ratio <= REDIS_GOALS.p50RatioToRlf,
    });
  }
  const mh = redisMemory('hostpace');
  const mf = redisMemory('rlf');
  goals.push({
    goal: `Redis fleet: memory per host (\`MEMORY USAGE\` of a host's key) ≤ ${REDIS_GOALS.bytesPerHost} B`,
    figure: mh ? `${fmtInt(mh.memoryUsageBytesPerKey)} B` : 'not measured',
    peer: mf ? `${fmtInt(mf.memoryUsageBytesPerKey)} B` : 'not measured',
    ratio: mh ? `${fmt2(mh.memoryUsageBytesPerKey / REDIS_GOALS.bytesPerHost)} of the limit` : '–',
    met: mh && !quick ? mh.memoryUsageBytesPerKey <= REDIS_GOALS.bytesPerHost : null,
  });
  goals.push({
    goal: `Redis fleet: memory per host (\`INFO memory\` used_memory growth ÷ hosts) ≤ ${REDIS_GOALS.bytesPerHost} B`,
    figure: mh ? `${fmtInt(mh.usedMemoryBytesPerHost)} B` : 'not measured',
    peer: mf ? `${fmtInt(mf.usedMemoryBytesPerHost)} B` : 'not measured',
    ratio: mh ? `${fmt2(mh.usedMemoryBytesPerHost / REDIS_GOALS.bytesPerHost)} of the limit` : '–',
    met: mh && !quick ? mh.usedMemoryBytesPerHost <= REDIS_GOALS.bytesPerHost : null,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The document.

const L = [];
const p = (...lines) => L.push(...lines);
// a section's figures from one input: if that input is malformed, the section says so instead of failing the report
function guarded(input, fill) {
  const mark = L.length;
  try {
    fill();
  } catch (e) {
    L.length = mark;
    p(`Could not be read: \`${input}\` (${e.message}).`);
  }
}

p(
  '# Benchmarks',
  '',
  'Generated by `node bench/report.mjs > BENCHMARKS.md` from the benchmarks\' own outputs; every figure below is',
  'read from them, none is typed in. To measure everything again and regenerate (on an otherwise idle machine:',
  'every benchmark is single-threaded and sensitive to a second busy process):',
  '',
  '```sh',
  'cargo bench --bench core                      # criterion, into target/criterion/',
  'cargo bench --bench robots                    # criterion, into target/criterion/',
  'node bench/report.mjs --save-criterion        # its estimates, copied into bench/results/criterion/',
  'cargo bench --bench memory | node bench/report.mjs --parse-memory > bench/results/memory.json',
  'npm run build:pkg                             # pkg/, measured by the Node benchmarks and for its size',
  'node bench/decisions.mjs                      # bench/results/decisions.json',
  'node --expose-gc bench/frontier.mjs           # bench/results/frontier.json',
  'scripts/build-worker.sh && node bench/workerd-floor/run.mjs > bench/results/workerd-floor.md',
  'HOSTPACE_BENCH_GROUP_BY=site node bench/workerd-floor/run.mjs > bench/results/workerd-floor-site.md',
  'node bench/playground.mjs                      # bench/results/playground.json (after both builds)',
  'node bench/nginx.mjs                          # bench/results/nginx.json (minutes; nginx from scripts/setup.sh)',
  'node bench/redis.mjs                          # bench/results/redis.json (1.5-3 min; redis-server from scripts/setup.sh)',
  'node bench/report.mjs > BENCHMARKS.md',
  '```',
  '',
  'A section whose input is missing says so, with the command that produces it. `bench/README.md` says what each',
  'Node row measures and what is fair and unfair about each peer.',
  '',
  '## Machine',
  '',
  'Where this report was generated; each section says when and where its figures were measured.',
  '',
  '| | |',
  '|---|---|',
  `| CPU | ${here.cpuModel} |`,
  `| cores | ${here.cores} |`,
  `| memory | ${fmt1(here.memGiB)} GiB |`,
  `| Rust | ${here.rust} |`,
  `| Node | ${here.node} |`,
  `| platform | ${here.platform} |`,
  `| generated | ${day(here.date)} |`,
  '',
  '## Goals',
  '',
  'Each goal beside its peer: the figure, the peer\'s, their ratio, and whether the figure meets the goal.',
  '',
  '| goal | figure | peer | ratio | met |',
  '|---|---:|---:|---:|:---:|',
);
for (const g of goals) p(`| ${g.goal} | ${g.figure} | ${g.peer} | ${g.ratio} | ${yes(g.met)} |`);
p('', besideGoals);

// --- core
p(
  '',
  '## Core decision speed beside governor (criterion)',
  '',
  '```sh',
  'cargo bench --bench core',
  '```',
  '',
  '`benches/core.rs`: hostpace evaluates and charges **every layer** (interval floor, token bucket, sliding-window',
  'quota, cooldown, server quota); governor checks one GCRA cell. The keyed cases visit hosts in a scattered order',
  '(stride 7919) after every host has been created. "Real clock" reads a clock per decision (hostpace:',
  '`MonotonicClock`, quanta\'s calibrated time-stamp counter as a native shell uses it; governor: its default quanta',
  'clock); "fake clock" passes time in (hostpace: a counter; governor: `FakeRelativeClock`), so only the algorithms and',
  'the maps are compared. The hot host reads one host\'s state over and over; there the real-clock row mostly measures',
  'the clock read. Times are criterion\'s estimate per decision with its 95 % confidence',
  'interval; the ratio is hostpace\'s time over governor\'s (lower is better for hostpace). The quota rows have no',
  'peer (governor has no quota): every host has used its quota for the hour before they are measured, so one decision',
  'in a quota\'s worth is the quota\'s, and the others count in its tally (`src/host/quota.rs`).',
  '',
);
if (criterion.length === 0) {
  p(`Not measured: no \`new/estimates.json\` under \`${rel(criterionDir)}\`. Run \`cargo bench --bench core\`.`);
} else {
  // the interval in the estimate's unit: "55.0 ns (53.9–56.6)"
  const ci = (r) => {
    if (!r) return 'not measured';
    if (typeof r.lo !== 'number' || typeof r.hi !== 'number') return ns(r.ns);
    const [v, unit] = ns(r.ns).split(' ');
    const scale = unit === 'µs' ? 1000 : 1;
    const digits = Math.max(0, (v.split('.')[1] ?? '').length);
    return `${v} ${unit} (${(r.lo / scale).toFixed(digits)}–${(r.hi / scale).toFixed(digits)})`;
  };
  p('| case | clock | hostpace | governor | ratio | goal | met |', '|---|---|---:|---:|---:|---:|:---:|');
  for (const r of critRows) {
    p(
      `| ${r.label} | ${r.clock} | ${ci(r.h)} | ${r.clocks ? '–' : ci(r.g)} | ${r.ratio === null ? '–' : fmt2(r.ratio) + '×'} | ` +
        `${r.goal === null ? '–' : '≤ ' + r.goal + '×'} | ${r.goal === null ? '–' : yes(r.met)} |`,
    );
  }
  const times = criterion.map((c) => c.mtime.getTime());
  p(
    '',
    `Measured ${day(Math.min(...times))}${Math.max(...times) - Math.min(...times) > 60_000 ? ` to ${day(Math.max(...times))}` : ''} ` +
      `(criterion's files under \`${rel(criterionDir)}\`; criterion records no toolchain: the Rust above is this machine's). ` +
      'The 1,000,000-host rows move the most from ' +
      'run to run: each decision there is a few cache and TLB misses on both sides.',
  );
}

// --- robots.txt
{
  const rows = criterion.filter((c) => c.group === 'robots' || c.group === 'robots, hostile files');
  const time = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(1)} ms` : ns(x));
  p(
    '',
    '## robots.txt matching (criterion)',
    '',
    '```sh',
    'cargo bench --bench robots',
    '```',
    '',
    '`benches/robots.rs`: a file of 18,000 rules (9,000 in the crawler\'s group, as many in a `*` group; about',
    '500 KiB, the most that is read), plain prefixes, prefixes with wildcards and anchors, and one rule in 40',
    'starting with a wildcard, which every path must try. `parse` reads and compiles it once; `allows` decides one',
    'URL or path (URL parsing included). Two hostile files of 500 KiB bound the worst a site can make a crawler',
    'pay: about 28,000 rules in descending order (each one compiled ranks before all read so far), and about',
    '25,000 rules that all start with a wildcard and never match, so that `allows` tries every one.',
    '',
  );
  if (rows.length === 0) p('Not measured. Run `cargo bench --bench robots`, then `node bench/report.mjs --save-criterion`.');
  else {
    p('| case | time (95 % interval) |', '|---|---:|');
    for (const r of rows) {
      const hostile = r.group === 'robots' ? '' : 'hostile: ';
      p(`| ${hostile}${esc(r.func)} | ${time(r.ns)} (${time(r.lo)}–${time(r.hi)}) |`);
    }
  }
}

// --- memory
p(
  '',
  '## Bytes per tracked host',
  '',
  '```sh',
  'cargo bench --bench memory | node bench/report.mjs --parse-memory > bench/results/memory.json',
  '```',
  '',
  '`benches/memory.rs` counts heap bytes with a counting global allocator while 1,000,000 hosts (`host<i>.example`)',
  'are tracked, by hostpace\'s `Registry` (default policy) and by governor\'s keyed limiter on the same keys. The',
  'registry keeps hosts in dense vectors (keys up to 22 bytes inline; one state per host) and finds',
  'them through an index table of 8-byte slots kept at most half full; with a quota configured, each host also has',
  'its sliding window beside its state.',
  '',
);
if (!memory) {
  p('Not measured: no `bench/results/memory.json`. Run the command above.');
} else guarded('bench/results/memory.json', () => {
  const m = memory;
  p(
    '| figure | hostpace | governor | ratio |',
    '|---|---:|---:|---:|',
    `| core state per host (\`size_of::<HostState>()\`) | ${m.hostStateBytes} B | – | – |`,
    `| heap per host, ${fmtInt(m.hosts)} hosts (state, index, key) | ${fmt1(m.registryHeapBytesPerHost)} B | ` +
      `${fmt1(m.governorHeapBytesPerKey)} B | ${fmt2(m.registryHeapBytesPerHost / m.governorHeapBytesPerKey)}× |`,
    `| heap for ${fmtInt(m.hosts)} hosts | ${fmtInt(m.registryHeapMB)} MB | – | – |`,
    `| resident set growth for ${fmtInt(m.hosts)} hosts | ${fmtInt(m.registryRssGrowthMB)} MB | – | – |`,
    '',
    `Average key length ${fmt1(m.averageKeyBytes)} bytes. Measured ${day(m.date)}.`,
  );
});

// --- package size
p(
  '',
  '## npm package size',
  '',
  '```sh',
  'npm run build:pkg        # prints the gzipped size; tests/js/size.test.mjs enforces the budget',
  '```',
  '',
  'The package\'s wasm module as `npm run build:pkg` leaves it in `pkg/` (built at `opt-level = "z"`: at "s" it is',
  'past the budget; docs/TOOLCHAIN.md has what "z" costs in speed), gzipped here with Node\'s zlib at level 9 (the',
  'size test\'s measure).',
  '',
);
if (!pkg) p('Not measured: no `pkg/hostpace_bg.wasm`. Run `npm run build:pkg`.');
else {
  p(
    '| file | raw | gzipped | budget | met |',
    '|---|---:|---:|---:|:---:|',
    `| \`pkg/hostpace_bg.wasm\` | ${fmtInt(pkg.raw)} B | ${fmtInt(pkg.gzip)} B | ${fmtInt(PKG_BUDGET)} B | ${yes(pkg.gzip <= PKG_BUDGET)} |`,
    '',
    `Built ${day(pkg.mtime)}; SHA-256 \`${pkg.sha256.slice(0, 12)}…\`.`,
  );
}
if (PKG_TEST_BUDGET !== PKG_BUDGET) {
  p('', `\`tests/js/size.test.mjs\` enforces ${fmtInt(PKG_TEST_BUDGET)} bytes, not the goal's ${fmtInt(PKG_BUDGET)}.`);
}

// --- Node decisions
p(
  '',
  '## JavaScript: decisions per second',
  '',
  '```sh',
  'npm run build:pkg && node bench/decisions.mjs',
  '```',
  '',
  'The npm package as a JavaScript crawler uses it, beside the JavaScript rate limiters a crawler would otherwise',
  'use. One workload for every row: 1,000,000 decisions over 10,000 hosts, the host of each decision from one fixed',
  'pseudo-random sequence, the same limit everywhere (2 requests per second per host, burst 2), a fresh limiter per',
  'timed run with per-host state created inside the timed loop. The median of 5 timed runs (3 for rows over ~1.5 s)',
  'after a warm-up. The peers are given the host name directly (no URL parsing): the equivalent of hostpace\'s',
  'interned fast path (`intern` + `acquireId`), and in their favour against its string path `acquire(url)`, which is',
  'compared with `limiter.tryRemoveTokens+URL` (the fastest peer keyed by `new URL(url).host` on every call).',
  '*go now* is the share of decisions that said "go now" (about 2 %: the first 2 requests to each host go); it shows',
  'that the rows do comparable work. hostpace\'s rows always reserve a departure; `limiter` and rate-limiter-flexible',
  'refuse without reserving; Bottleneck\'s `check` neither reserves nor refuses.',
  '',
);
if (!decisions) {
  p('Not measured: no `bench/results/decisions.json`. Run the command above.');
} else guarded('bench/results/decisions.json', () => {
  const peerId = 'limiter.tryRemoveTokens';
  const peer = byId[peerId];
  p(
    provenance(decisions),
    '',
    `| row | call | decisions | runs | decisions/s (median) | best | ns/decision | go now | × \`${peerId}\` |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of decisions.results) {
    const go = r.goNowShare === null || r.goNowShare === undefined ? '–' : `${(r.goNowShare * 100).toFixed(1)} %`;
    const ratio = r.kind === 'diagnostic' || !peer ? '–' : (r.perSecMedian / peer.perSecMedian).toFixed(3);
    const id = r.kind === 'diagnostic' ? `_${r.id}_` : r.id;
    p(
      `| ${id}${r.overBudget ? ' (one timed run: over the time budget)' : ''} | ${esc(r.call)} | ${fmtInt(r.decisions)} | ${r.runs} | ` +
        `${fmtInt(r.perSecMedian)} | ${fmtInt(r.perSecBest)} | ${fmtInt(r.nsPerDecision)} | ${go} | ${ratio} |`,
    );
  }
  for (const s of decisions.skipped ?? []) p(`| ${s.library} | not measured: ${esc(s.reason)} | | | | | | | |`);
  const b = decisions.breakdownNs;
  if (b) {
    p(
      '',
      `Where \`acquire(url, nowMs)\`'s ${b.acquireUrlNs} ns go: the decision itself (\`acquireId\`) is ${b.acquireIdNs} ns, so ` +
        `~${b.acquireUrlNs - b.acquireIdNs} ns are the URL and the boundary (the string in, the URL parse, the host key, the ` +
        `result object out). For scale: plain-JS \`new URL(url).hostname\` ${b.platformUrlNs} ns; \`intern(url)\` (URL to host ` +
        `id through the boundary, no decision) ${b.internNs} ns; \`acquireId(intern(url))\` ${b.internPlusAcquireIdNs} ns; ` +
        `\`peek(url)\` ${b.peekUrlNs} ns.`,
    );
  }
  p(
    '',
    'The `.virtual` rows pass the caller\'s instants (a virtual clock advancing 1 µs a decision); the `.clock` rows read',
    'the default clock (`performance.timeOrigin + performance.now()`) per call, as the peers read theirs, except',
    '`hostpace.acquireIds.clock`, which reads it once per batch of 1,000 (what a crawler reserving departures for a',
    'page\'s links does; not like for like with the peers).',
  );
});

// --- frontier
p(
  '',
  '## JavaScript: a million URLs through a `Frontier`',
  '',
  '```sh',
  'npm run build:pkg && node --expose-gc bench/frontier.mjs',
  '```',
  '',
  '1,000,000 URLs over 100,000 hosts (`https://host<i mod 100000>.example/page/<i div 100000>`) are pushed into',
  '`new Frontier(new Limiter({ ratePerSec: 10, burstCapacity: 1 }))`, then drained with a virtual clock the way a',
  'crawler that fetches on its own does: `take(now)` pops the next URL whose host may go and reserves its departure;',
  'when nothing is ready the crawler "sleeps" `waitMs(now)`. Memory is read after `gc()` at each stage (the wasm',
  'linear memory never shrinks, so freeing the frontier and the limiter returns nothing to the process).',
);
if (frontier?.runTotalsMs) {
  p(
    `The whole workload runs ${frontier.runs} times, each in a fresh process: the figures are the median run's (by`,
    'push + drain), the RSS after the push and the peak RSS the largest of all the runs.',
  );
}
p('');
if (!frontier) {
  p('Not measured: no `bench/results/frontier.json`. Run the command above.');
} else guarded('bench/results/frontier.json', () => {
  const f = frontier;
  const goalMs = f.goals?.ms ?? 2000;
  const goalMb = f.goals?.mb ?? 200;
  const afterPush = f.memory?.[1];
  p(
    provenance(f),
    '',
    '| measure | value | goal | met |',
    '|---|---:|---:|:---:|',
    `| push ${fmtInt(f.workload.urls)} URLs | ${fmtInt(f.pushMs)} ms (${fmtInt(f.nsPerPush)} ns/URL; building the strings alone ${fmtInt(f.stringBuildMs)} ms) | < ${fmtInt(goalMs)} ms | ${yes(f.met?.push)} |`,
    `| push, ns/URL in each tenth (tenth k adds URL k to every host) | ${f.nsPerPushByTenth.map(fmtInt).join(' · ')} | | |`,
    `| push, wasm memory growth in each tenth (MB) | ${f.wasmGrowthMBByTenth.join(' · ')} | | |`,
    `| drain (\`take(now)\`: pop and reserve in one call) | ${fmtInt(f.drainMs)} ms (${fmtInt(f.nsPerDrainedUrl)} ns/URL) | < ${fmtInt(goalMs)} ms | ${yes(f.met?.drain)} |`,
    `| push + drain | ${fmtInt(f.totalMs)} ms | < ${fmtInt(goalMs)} ms | ${yes(f.met?.total)} |`,
    ...(f.runTotalsMs
      ? [`| push + drain in each run (a fresh process each; the median run is the one above) | ${f.runTotalsMs.map(fmtInt).join(' · ')} ms | | |`]
      : []),
    ...(afterPush
      ? [`| RSS after push (after gc${f.rssAfterPushMB ? '; the largest of the runs' : ''}) | ${f.rssAfterPushMB ?? afterPush.rssMB} MB | < ${goalMb} MB | ${yes(f.met?.rssAfterPush)} |`]
      : []),
    `| peak RSS (${f.runTotalsMs ? 'the largest of the runs' : 'whole main run'}) | ${f.peakRssMB} MB | < ${goalMb} MB | ${yes(f.met?.peakRss)} |`,
    `| virtual time to drain | ${fmtInt(f.drain.virtualMs)} ms (${f.drain.sleeps} sleeps of the crawler) | | |`,
    `| hosts with a reservation that had to wait | ${f.drain.hostsThatWaited} | 0 | ${yes(f.drain.hostsThatWaited === 0)} |`,
    '',
    'Each host\'s queue doubles its capacity in tenths 1, 5 and 9, and growing the wasm memory costs more the larger',
    'it is: that is the step in those tenths\' push cost.',
    '',
    '| stage | RSS MB | JS heap used MB | external MB | wasm memory MB |',
    '|---|---:|---:|---:|---:|',
  );
  for (const m of f.memory ?? []) p(`| ${m.stage} | ${m.rssMB} | ${m.heapUsedMB} | ${m.externalMB} | ${m.wasmMemoryMB} |`);
  if (f.diagnostics?.length) {
    const d0 = f.diagnostics.find((d) => d.hosts) ?? {};
    p(
      '',
      `Where the time goes (${fmtInt(d0.urls ?? 0)} URLs over ${fmtInt(d0.hosts ?? 0)} hosts, a fresh limiter and frontier per line):`,
      '',
      '| variant | ns per push | ns per drained URL |',
      '|---|---:|---:|',
    );
    for (const d of f.diagnostics) {
      p(`| ${esc(d.variant)} | ${fmtInt(d.nsPerPush)} | ${d.nsPerDrainedUrl === undefined ? '–' : fmtInt(d.nsPerDrainedUrl)} |`);
    }
  }
});

// --- nginx limit_req
p(
  '',
  '## JavaScript: a crawler against nginx `limit_req`',
  '',
  '```sh',
  'npm run build:pkg && node bench/nginx.mjs',
  '```',
  '',
  '`bench/nginx.mjs` crawls a real nginx (Debian\'s, on 127.0.0.1, a fresh server per row) whose 40 pages are',
  `limited to ${nginxSiteRate} requests a second per client address with no burst (\`limit_req_zone … rate=${nginxSiteRate}r/s\`;`,
  'a rejection is a 429 with `Retry-After: 1`), and judges from nginx\'s own access log. The crawler is a fresh',
  '`Limiter` per row (robots.txt ignored) configured at 1×, 2.5× and 5× the site\'s rate, without and with adaptive',
  'pacing (`adaptive: {}`), and 8 callers pulling the page URLs from one queue through `limiter.fetch` (each call',
  'bounded at 60 s, a row at 180 s). *requests* are the access log\'s lines for pages; *seconds* run from the first',
  'to the last of them (nginx\'s `$msec`); pages/s is (pages − 1) ÷ seconds, so that a crawl at exactly the site\'s',
  'rate measures it; *of the allowed rate* is pages/s ÷ the site\'s rate. Goals: at 1× no request rejected; at 5×',
  'at most 10 % rejected and at least 70 % of the allowed rate. The row 5x+gateway crawls through the edge gateway',
  'instead (wrangler dev on 127.0.0.1, `CRAWL_RATE_PER_SEC=10`, `CRAWL_BURST_CAPACITY=4`, robots.txt not obeyed,',
  '`CRAWL_MAX_RESERVATIONS_PER_TOKEN=8`: one reservation per caller, as the package lets each hold one), with',
  '`GatewayLimiter.fetch` for each call, all with one token.',
  '',
);
if (!nginxBench) {
  p('Not measured: no `bench/results/nginx.json`. Run the command above.');
} else guarded('bench/results/nginx.json', () => {
  const n = nginxBench;
  p(
    `${provenance(n)}${n.nginx ? ` Server: ${esc(n.nginx)}.` : ''}` +
      (n.rowsFilter ? ` **Only the rows ${esc(n.rowsFilter)} were run.**` : ''),
    '',
    '| row | crawler | requests | 429s | rejected | pages | seconds | pages/s | of the allowed rate | goal | met |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|:---:|',
  );
  for (const r of n.results) {
    const c = r.config ?? {};
    const g = r.goal;
    const goal = !g
      ? '–'
      : [g.maxRejectedShare === 0 ? 'none rejected' : `≤ ${pctGoal(g.maxRejectedShare)} rejected`, ...(isNum(g.minAllowedRateShare) ? [`≥ ${pctGoal(g.minAllowedRateShare)} of the rate`] : [])].join(', ');
    p(
      `| ${esc(r.id)} | ${c.ratePerSec}/s, burst ${c.burstCapacity}${r.adaptive ? ', adaptive' : ''}` +
      `${r.via === 'gateway' ? ', through the gateway' : ''} | ${fmtInt(r.requests)} | ` +
        `${fmtInt(r.rejected)} | ${pct1(r.rejectedShare)} | ${fmtInt(r.pagesFetched)} of ${fmtInt(n.workload?.site?.pages)} | ${fmt1(r.seconds)} | ${fmt2(r.pagesPerSec)} | ` +
        `${pct1(r.allowedRateShare)} | ${goal} | ${g ? yes(r.met) : '–'} |`,
    );
  }
  const bounded = n.results.filter((r) => r.givenUpAfterBound).map((r) => r.id);
  if (bounded.length) p('', `Given up after ${n.workload?.rowBoundSec ?? 180} s: ${bounded.map(esc).join(', ')}.`);
});

// --- a fleet on one Redis
p(
  '',
  '## JavaScript: a fleet on one Redis (`SharedLimiter` beside `RateLimiterRedis`)',
  '',
  '```sh',
  'npm run build:pkg && node bench/redis.mjs',
  '```',
  '',
  '`bench/redis.mjs` starts one redis-server (Debian\'s, on 127.0.0.1, stopped by its PID at the end) and runs 1, 4',
  'and 16 child processes against it, each with its own ioredis 5 client (`enableOfflineQueue: false`) and its own',
  'limiter, making decisions one at a time on 1 host or on 10,000 hosts (each process its own fixed pseudo-random',
  'sequence of hosts). The policy is 2 requests a second per host, burst 2: hostpace\'s `SharedLimiter.acquire(url)`',
  '(`hostpace/redis`\'s `redisStore`) reserves a departure and answers its wait at once; rate-limiter-flexible\'s',
  '`RateLimiterRedis.consume(host)` (points 2, duration 1 s) resolves or rejects at once. A decision\'s latency is the',
  'wall time of that one awaited call, its round trips to Redis included; decisions/s is every process\'s decisions',
  'over the time from the first process\'s start to the last one\'s end. *store calls* are hostpace\'s calls of its',
  'store (`get`, `compareAndSet`, `set`, `timeMs`: one round trip each), counted by a wrapper, and *CAS lost* the',
  'compare-and-sets another write beat. A lost one is decided again at once on the record that won (twice), then',
  'after a random pause and a read; after 16 lost in a row, a call handles the store as failing: with the default',
  '`onStoreError: "local"` the process then decides on its own share of the policy, without the store, for a second',
  '(*local*); such decisions cost microseconds and make no round trip.',
  '',
);
if (!redisBench) {
  p('Not measured: no `bench/results/redis.json`. Run the command above.');
} else guarded('bench/results/redis.json', () => {
  const r = redisBench;
  const w = r.workload ?? {};
  const us = (x) => (isNum(x) ? fmtInt(x) : '?');
  p(
    `${provenance(r)}${r.redisServer ? ` Redis ${esc(r.redisServer)}.` : ''}`,
    '',
    `Each row: ${fmtInt(w.decisionsPerRow)} decisions shared out among its processes (each stops after ` +
      `${fmt1((w.capMsPerProcess ?? 0) / 1000)} s of timed decisions), after ${fmtInt(w.warmupPerProcess)} untimed ` +
      'decisions per process on hosts of its own; the store is emptied before each row. A pair\'s two rows run back to back.',
    '',
    '| processes | hosts | hostpace decisions/s | p50 µs | p99 µs | `RateLimiterRedis` decisions/s | p50 µs | p99 µs | decisions/s ratio | p50 ratio | p99 ratio |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const pairs = [];
  for (const hosts of w.hosts ?? [1, 10_000]) {
    for (const processes of w.processes ?? [1, 4, 16]) {
      const h = redisRow('hostpace', processes, hosts);
      const f = redisRow('rlf', processes, hosts);
      if (!h && !f) continue;
      pairs.push({ h, f });
      const ratio = (a, b) => (isNum(a) && isNum(b) ? `${fmt2(a / b)}×` : '–');
      const capped = (x) => (x?.cappedProcesses ? ' (capped)' : '');
      p(
        `| ${processes} | ${fmtInt(hosts)} | ${h ? fmtInt(h.perSec) + capped(h) : 'not measured'} | ${us(h?.p50Us)} | ${us(h?.p99Us)} | ` +
          `${f ? fmtInt(f.perSec) + capped(f) : 'not measured'} | ${us(f?.p50Us)} | ${us(f?.p99Us)} | ` +
          `${ratio(h?.perSec, f?.perSec)} | ${ratio(h?.p50Us, f?.p50Us)} | ${ratio(h?.p99Us, f?.p99Us)} |`,
      );
    }
  }
  p(
    '',
    `Ratios are hostpace ÷ \`RateLimiterRedis\` (decisions/s: higher is better for hostpace; latency: lower). Goal: p50 ` +
      `≤ ${REDIS_GOALS.p50RatioToRlf}× (the Goals table: one process, and every row on 10,000 hosts); with several ` +
      'processes on one host, hostpace\'s figures mix decisions made through the store with local ones (below), so ' +
      'they are not judged. *(capped)*: a process reached the time cap ' +
      'before its share of decisions.',
    '',
    'Round trips of hostpace\'s decisions (its store calls). *first* is a process\'s first decision on a host (it takes',
    'the host to have no record: one call, and one more when another process wrote one); *again* a later one (its own',
    'copy of the record is used, or none once it expired: one, unless another process wrote the host since, which',
    'loses a compare-and-set and decides again); *uncontended* the *again* decisions that lost none.',
    '',
    '| processes | hosts | store calls / decision | first | again | uncontended | of those, one call | CAS lost | local decisions | through the store: p50 µs | p99 µs |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const { h } of pairs) {
    if (!h) continue;
    const per = (k) => (k?.decisions ? `${fmt2(k.storeCallsPerDecision)} (${fmtInt(k.decisions)})` : '–');
    p(
      `| ${h.processes} | ${fmtInt(h.hosts)} | ${fmt2(h.storeCallsPerDecision)} | ${per(h.firstTouch)} | ${per(h.again)} | ` +
        `${per(h.uncontended)} | ${pct1(h.uncontended?.shareWithOneCall)} | ${fmtInt(h.casLost)} | ` +
        `${fmtInt(h.localDecisions)} of ${fmtInt(h.decisions)} | ${us(h.throughStore?.p50Us)} | ${us(h.throughStore?.p99Us)} |`,
    );
  }
  const hot = redisRow('hostpace', 16, 1);
  if (hot) {
    p(
      '',
      `16 processes on 1 host: ${fmtInt(hot.casLost)} compare-and-sets lost (${fmt2(hot.casLostPerDecision)} per decision), ` +
        `${fmtInt(hot.storeWarnings)} calls gave up on the store after 16 in a row, and ${fmtInt(hot.localDecisions)} of ` +
        `${fmtInt(hot.decisions)} decisions were made locally while it was handled as failing.`,
    );
  }
  const u = redisUncontended();
  const ping = (r.diagnostics ?? []).find((d) => d.library === 'ping');
  const rlfScripts = redisRows.filter((x) => x.library === 'rlf').map((x) => x.serverScriptsPerDecision);
  p(
    '',
    `Goal: ${REDIS_GOALS.storeCallsPerUncontendedDecision} round trip per uncontended decision: ` +
      (u ? `${fmt2(u.perDecision)} over ${fmtInt(u.n)} such decisions (${pct1(u.oneShare)} with exactly one).` : 'not measured.') +
      (rlfScripts.length ? ` \`RateLimiterRedis\` runs ${fmt2(Math.max(...rlfScripts))} script per decision (the server\'s count).` : '') +
      (ping ? ` For scale, one \`PING\` round trip on the same client, one process: p50 ${us(ping.p50Us)} µs, p99 ${us(ping.p99Us)} µs.` : ''),
  );
  const stores = (r.diagnostics ?? []).filter((d) => d.library === 'store');
  if (stores.length) {
    p(
      '',
      'The store\'s part alone (`diag.store` rows): each decision is only hostpace\'s compare-and-set through',
      '`redisStore`, of a record-sized value (63 B) that lives 750 ms, expecting what the process last wrote (until it',
      'expires) or found, and again on the value found when another process wrote first, as `SharedLimiter` does;',
      'nothing is decided. It is what any decision made as the algorithm in the client and one compare-and-set per',
      'key costs on this workload, before the decision itself. On 2 cores, the rows of 4 and 16 processes are',
      'CPU-bound: a decision\'s p50 grows with the CPU all processes and the server spend per decision.',
      '',
      '| processes | hosts | `RateLimiterRedis` p50 µs | store alone p50 µs | store alone ÷ rlf | its store calls / decision | hostpace p50 µs | hostpace ÷ rlf | hostpace store calls / decision | CPU / decision µs: rlf · store alone · hostpace |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    );
    for (const d of stores) {
      const rlf = redisRow('rlf', d.processes, d.hosts);
      const hp = redisRow('hostpace', d.processes, d.hosts);
      const cpu = (x) => (x ? fmtInt(x.clientCpuUsPerDecision + x.serverCpuUsPerDecision) : '–');
      const ratio = (x) => (x && rlf ? `${fmt2(x.p50Us / rlf.p50Us)}×` : '–');
      p(
        `| ${d.processes} | ${fmtInt(d.hosts)} | ${us(rlf?.p50Us)} | ${us(d.p50Us)} | ${ratio(d)} | ${fmt2(d.storeCallsPerDecision)} | ` +
          `${us(hp?.p50Us)} | ${ratio(hp)} | ${fmt2(hp?.storeCallsPerDecision)} | ${cpu(rlf)} · ${cpu(d)} · ${cpu(hp)} |`,
      );
    }
  }
  const memory = Array.isArray(r.memory) ? r.memory : [];
  p(
    '',
    `Redis memory per host: one process decides once on each of ${fmtInt(w.memory?.hosts ?? 10_000)} hosts with a policy ` +
      'whose record stays (hostpace: a quota of 1,000 an hour; `RateLimiterRedis`: points 1,000, duration 3,600 s), ' +
      `then \`MEMORY USAGE\` of ${fmtInt(w.memory?.sampledKeys ?? 200)} sampled keys and the growth of \`INFO memory\` ` +
      `used_memory (which counts the expiry table too) ÷ hosts. Goal: ≤ ${REDIS_GOALS.bytesPerHost} B per host, judged ` +
      'on `MEMORY USAGE` (the Goals table shows both).',
    '',
    '| limiter | hosts | keys | used_memory growth / host | `MEMORY USAGE` / key | value | key name | goal | met |',
    '|---|---:|---:|---:|---:|---:|---:|---:|:---:|',
  );
  if (!memory.length) p('| not measured | | | | | | | | |');
  for (const m of memory) {
    const hp = m.library === 'hostpace';
    p(
      `| ${hp ? 'hostpace `SharedLimiter`' : '`RateLimiterRedis`'} | ${fmtInt(m.hosts)} | ${fmtInt(m.keys)} | ${fmtInt(m.usedMemoryBytesPerHost)} B | ` +
        `${fmtInt(m.memoryUsageBytesPerKey)} B | ${fmtInt(m.valueBytesPerKey)} B | ${fmtInt(m.keyBytesPerKey)} B | ` +
        `${hp ? `≤ ${REDIS_GOALS.bytesPerHost} B` : '–'} | ${hp ? yes(r.quick ? null : m.memoryUsageBytesPerKey <= REDIS_GOALS.bytesPerHost) : '–'} |`,
    );
  }
});

// --- gateway
p(
  '',
  '## Edge fetch gateway (`worker/`)',
  '',
  '### Worker size',
  '',
  '```sh',
  'scripts/build-worker.sh       # prints the gzipped size; tests/gateway/size.test.mjs enforces the budget',
  '```',
  '',
  'The Worker\'s wasm module as `scripts/build-worker.sh` leaves it (worker-build `--release` with the workspace\'s',
  'release profile at `opt-level = "s"` and `strip = true` for this build, then npm binaryen\'s wasm-opt), gzipped at',
  'level 9.',
  'Most of it is workers-rs (its `url` crate, serde-wasm-bindgen, the futures glue of each async handler) and',
  'serde_json; the hostpace core is a small part.',
  '',
);
if (!worker) p('Not measured: no `worker/build/index_bg.wasm`. Run `scripts/build-worker.sh`.');
else {
  p(
    '| file | raw | gzipped | budget | met |',
    '|---|---:|---:|---:|:---:|',
    `| \`worker/build/index_bg.wasm\` | ${fmtInt(worker.raw)} B | ${fmtInt(worker.gzip)} B | ${fmtInt(WORKER_BUDGET)} B | ${yes(worker.gzip <= WORKER_BUDGET)} |`,
    '',
    `Built ${day(worker.mtime)}.`,
  );
}
p(
  '',
  '### Overhead on workerd, beside the floor of the design',
  '',
  '```sh',
  'scripts/build-worker.sh && node bench/workerd-floor/run.mjs > bench/results/workerd-floor.md',
  'HOSTPACE_BENCH_GROUP_BY=site node bench/workerd-floor/run.mjs > bench/results/workerd-floor-site.md',
  '```',
  '',
  '`bench/workerd-floor/run.mjs` runs the gateway\'s Worker build under miniflare (workerd without wrangler\'s proxy,',
  'state on disk, the decision log dropped) beside JavaScript Workers that do the least any gateway of this design',
  'does on the same runtime (nothing; one Durable Object call; one call with a SQLite write; that write, then the',
  'upstream fetch), all on 127.0.0.1 with a policy that never waits and robots.txt off. Nine rounds over every row,',
  'each row 50 warm-up and 300 timed sequential GETs a round; "over direct" is a row\'s p50 minus the same round\'s',
  'direct GET, and the table shows the median round. The write that every design persisting a decision before',
  'answering pays includes the runtime\'s output gate holding the answer until SQLite has committed.',
  '',
);
if (!floorResults) {
  p('Not measured: no `bench/results/workerd-floor.md`. Run the command above.');
} else guarded('bench/results/workerd-floor.md', () => {
  // two tables: the timings, then the Durable Object calls per proxied request
  const { rows, calls, gw, floor } = floorResults;
  p('| row | p50 ms | p99 ms | p50 over direct | each round |', '|---|---:|---:|---:|---|');
  for (const c of rows) p(`| ${c.join(' | ')} |`);
  p('', `Measured ${day(statSync(floorFile).mtime)} (the file's time).`);
  if (gw !== null && floor) {
    p(
      `The gateway's \`GET /v1/fetch\` costs ${fmt2(gw)} ms over a direct GET, ${fmt2(gw / floor)}× the floor row ` +
        `(${fmt2(floor)} ms: a JavaScript Worker making one Durable Object call with a SQLite write, then the fetch).`,
    );
  }
  const site = floorSiteResults;
  if (site && site.gw !== null && site.floor) {
    p(
      '',
      `Grouped by site (\`CRAWL_GROUP_BY=site\`, \`HOSTPACE_BENCH_GROUP_BY=site node bench/workerd-floor/run.mjs > ` +
        `bench/results/workerd-floor-site.md\`: the fetch goes to a host of a site, decided by the site's object), ` +
        `the same row costs ${fmt2(site.gw)} ms over a direct GET, ${fmt2(site.gw / site.floor)}× that run's floor row ` +
        `(${fmt2(site.floor)} ms), beside ${fmt2(gw / floor)}× per host: what grouping adds to a request is the ` +
        `difference of the two ratios, ${fmt2(site.gw / site.floor - gw / floor)}× the floor.`,
    );
  }
  const callLines = calls.split('\n').filter((l) => l.startsWith('|'));
  if (callLines.length > 2) {
    p(
      '',
      'Durable Object calls per proxied request, counted by the objects themselves (`bench/workerd-floor/counted.mjs`',
      'wraps the same build) on a gateway pacing 1/s with burst 1, including what runs after the answer (the rules',
      'object is asked once, when a host\'s object loads, never on a request\'s way after that):',
      '',
      ...callLines,
    );
  }
});

// --- playground
p(
  '',
  '## Playground frame time, 20 lanes',
  '',
  '```sh',
  'npm run build:pkg && scripts/build-worker.sh && node bench/playground.mjs   # bench/results/playground.json',
  '```',
  '',
  '`bench/playground.mjs` measures the page in headless Chromium with its own figures (`performance.now` in the',
  'page): the work of each animation frame and the interval between frames, 5 s after 0.5 s of warm-up. Simulated:',
  'the 429 scenario with 20 hosts at 10× virtual speed from a static server. Live: the page served by the gateway',
  '(`wrangler dev`) in Live mode while one token crawls 20 origins on 127.0.0.1 through it, on the same machine',
  '(so the gateway, the origins and the crawl share its 2 cores with the browser). 60 fps is a 16.7 ms frame.',
  '',
);
if (!playground) {
  p('Not measured: no `bench/results/playground.json`. Run the command above.');
} else guarded('bench/results/playground.json', () => {
  const g = playground;
  const row = (name, s, extra) =>
    `| ${name} | ${s.lanes} | ${s.frames} | ${fmt1(s.workMs.median)} ms | ${fmt1(s.workMs.p95)} ms | ` +
    `${fmt1(s.frameIntervalMs.median)} ms | ${extra} |`;
  p(
    '| mode | lanes | frames in 5 s | work per frame, median | p95 | frame interval, median | requests the page makes |',
    '|---|---:|---:|---:|---:|---:|---|',
    row('simulated, 10×', g.simulated, 'none'),
    row('live', g.live, `${fmt2(g.live.requestsPerSec)}/s (one \`GET /v1/hosts?detail=1\` every ${fmtInt(g.live.pollPeriodMs)} ms)`),
    '',
    `Measured ${day(g.date)} with ${esc(g.chromium)}, Node ${g.node}, ${g.cpus} × ${esc(g.cpuModel ?? '')}.`,
    'The tests hold both to p95 work per frame under 16.7 ms and a median frame interval under 18.7 ms',
    '(`tests/playground/playground.test.mjs` "rendering", `tests/gateway/live.test.mjs`).',
  );
});

// --- not tabulated
p(
  '',
  '## Measured by tests, not tabulated here',
  '',
  '- The gateway under `wrangler dev`: `scripts/build-worker.sh && node tests/gateway/bench.mjs` prints the latency',
  '  added by the gateway through wrangler\'s local proxy and the throughput across 1,000 hosts. Not measured in',
  '  production Cloudflare, where the Worker and the object share a location and time is frozen between I/O.',
  '',
);

process.stdout.write(L.join('\n'));
