// hostpace playground: lanes of target hosts, each driven by the hostpace wasm module under a virtual clock.
//
// Nothing here computes a wait. Every departure time, the layer that set it, every level shown (tokens, next
// leaky slot, quota used, cooldown, permits, adaptive rate) and every audit violation is an answer of the module
// (`Limiter.peek/acquire/observe/setRobots/stats/retryVerdict`, the primitives' `peek/acquire/tokens/nextSlotMs`,
// `audit`). This file only keeps the clock, plays the crawler (one queue of links per host, fetched when the
// module says the host may be visited) and the servers (their scripted answers), and draws what happened. The
// wait shown for a departure is measured, not computed: from when its link first asked to go until it went.
//
// The crawler waits in the scheduler, not the fetcher: a host's next link is reserved with `acquire` only once `peek`
// says it may go now, so a 429 that arrives while links are queued stops every later departure.
//
// Served by the gateway, the page also has a live mode (live.js): one lane per host a gateway token has used, with
// the departures, levels and answers the gateway reports, judged by the same `audit`, drawn by the same code.

import * as hostpace from './pkg/browser.js';
import {
  GatewayClient, POLL_MS, TOLERANCE_MS, liveLane, mergeHost, liveLevels, auditLiveLane, auditCooldowns,
  liveLaneState, lowerBound,
} from './live.js';

const { Limiter, TokenBucket, LeakyBucket } = hostpace;

// ---- constants -------------------------------------------------------------------------------------------------
const VIEW_MS = 24_000; // virtual milliseconds a timeline shows at first
const MIN_VIEW_MS = 2_000; // zoomed all the way in
const MAX_VIEW_MS = 600_000; // zoomed all the way out
const PAD_PX = 6; // t=0 sits this far (CSS px) inside a timeline's left edge
const POINTER_PX = 6; // a departure this close to the pointer (CSS px) is the one described
const MAX_FRAME_MS = 100; // a late frame (background tab) advances at most this much real time
const TEXT_EVERY_MS = 100; // text readouts refresh at 10 Hz, timelines every frame
const AUDITS_PER_FRAME = 2; // lanes re-audited per frame (round robin); state reads audit everything first
const MAX_EVENTS = 200_000; // per advance: a guard against a scenario that never lets time move
const FRAME_SAMPLES = 600; // frame-time ring buffer
const LOG_KEEP = 10_000; // departures kept per lane (the oldest 2,000 go when it is full; timelines show 24 s)
const LOG_TRIM = 2_000;
const USER_AGENT = 'hostpace-playground';
const LAYER_COLORS = {
  none: '#7b8390',
  interval: '#2f6fdb',
  burst: '#e08a00',
  quota: '#8e44ad',
  cooldown: '#d62828',
  concurrency: '#138a72',
  serverQuota: '#8c5a2b',
};
const VIOLATION_COLOR = '#b3001b';
const TIMELINE_PX = 72; // CSS height of a timeline
const MARK_PX = 12; // a departure's mark (CSS px); departures in the same pixel column stack up STACK_PX apart
const STACK_PX = 4;
const DEFAULTS = {
  ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, quotaWindowSec: 60, maxConcurrency: 0,
  maxBackoffSec: 120, maxRetries: 3, adaptive: false, minRatePerSec: 0.25, targetLatencyMs: 1000, steps: 20,
  n: 10, hosts: 3, latencyMs: 200, compare: false,
};
const BOOLEAN_KEYS = ['adaptive', 'compare'];
const INTEGER_KEYS = ['quotaLimit', 'maxConcurrency', 'maxRetries', 'steps', 'hosts'];
const SPEEDS = [0, 1, 10];
const CHART_PX = 24; // CSS height of the token chart under a timeline
const SAMPLE_MS = 100; // the chart samples the token level at least this often (virtual time), and at every event
const SAMPLES_KEEP = 30_000; // samples kept per lane (the oldest 5,000 go when it is full)
const SLOT_CELLS = 8; // reserved future departures drawn as slots
const MAX_SEATS = 20; // permits drawn as seats (more are counted in the text)

// Scenarios: settings they start from, the hosts they crawl (links queued at t=0, Infinity = always more), what
// each host's server answers, and what happens before the first request.
const ok = () => ({ status: 200, headers: {} });
const SCENARIOS = {
  discover: {
    title: 'Discover 40 links',
    knob: null, // N plays no part
    note: (s) => `A page links to 40 URLs on one host, all discovered at t=0. The token bucket (capacity ${s.burstCapacity}) ` +
      `sends them together; the leaky bucket sends one per interval; hostpace's layered limiter keeps the interval floor ` +
      `(${s.minIntervalSec} s) whatever the burst capacity. Same average rate, very different access log.`,
    settings: { ratePerSec: 2, burstCapacity: 40, minIntervalSec: 0.5, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 1, n: 0, latencyMs: 200, compare: true },
    hosts: () => [{ host: 'shop.example', links: 40 }],
    fill: { links: 40 },
  },
  retry429: {
    title: 'Server answers 429 with Retry-After N',
    knob: 'Retry-After N (s)',
    note: (s) => `busy.example answers its first request after t=3 s with 429 and Retry-After: ${s.n}. Nothing departs to it until ` +
      `the cooldown (capped by max backoff, ${s.maxBackoffSec} s) ends; the other hosts keep going.`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 3, n: 10, latencyMs: 200, compare: false },
    hosts: (s) => [{
      host: 'busy.example',
      links: Infinity,
      respond: (req, state) => {
        if (!state.sent429 && req.departMs >= 3000) {
          state.sent429 = true;
          return { status: 429, headers: { 'retry-after': String(s.n) }, retryAfterMs: s.n * 1000 };
        }
        return ok();
      },
    }],
    fill: { links: Infinity },
  },
  crawlDelay: {
    title: 'robots.txt says Crawl-delay N',
    knob: 'Crawl-delay N (s)',
    note: (s) => `slowpoke.example's robots.txt says Crawl-delay: ${s.n}. It raises that host's interval floor (never lowers ` +
      `it; capped by the module); the other hosts keep the configured pace. It also says Disallow: /private/, and every ` +
      `fourth link there points into it: the module refuses it (✕ on the lane) and it never departs.`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 2, n: 3, latencyMs: 200, compare: false },
    hosts: (s) => [{
      host: 'slowpoke.example',
      links: Infinity,
      robots: `User-agent: *\nCrawl-delay: ${s.n}\nDisallow: /private/\n`,
      // the crawler's k-th link there (from 1): every fourth one is under /private/
      link: (k) => (k % 4 === 0 ? `/private/${k}` : `/page/${k}`),
    }],
    fill: { links: Infinity },
  },
  rateLimit0: {
    title: 'RateLimit remaining 0',
    knob: 'Server window N (s)',
    note: (s) => `api.example allows 6 requests per ${s.n} s window and says so in a RateLimit header on every answer ` +
      `(remaining, reset). When remaining reaches 0 the host waits for the reset (layer "server quota").`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 2, n: 10, latencyMs: 200, compare: false },
    hosts: (s) => [{
      host: 'api.example',
      links: Infinity,
      respond: (req, state) => {
        // the server's own fixed window (this is the target's behaviour, not a limiter)
        const windowMs = Math.max(1, s.n) * 1000;
        const w = Math.floor(req.arriveMs / windowMs);
        if (state.window !== w) { state.window = w; state.count = 0; }
        state.count += 1;
        const reset = Math.max(1, Math.ceil(((w + 1) * windowMs - req.doneMs) / 1000));
        if (state.count > 6) return { status: 429, headers: { 'retry-after': String(reset) }, retryAfterMs: reset * 1000 };
        return { status: 200, headers: { ratelimit: `limit=6, remaining=${6 - state.count}, reset=${reset}` } };
      },
    }],
    fill: { links: Infinity },
  },
  warmup: {
    title: 'New host warms up',
    knob: null,
    note: (s) => `Adaptive pacing: every host starts at ${Math.max(s.minRatePerSec, s.ratePerSec / 2)}/s and widens toward ` +
      `${s.ratePerSec}/s after each success faster than ${s.targetLatencyMs} ms. fast.example answers in ${s.latencyMs} ms ` +
      `and widens; slow.example answers in ${2 * s.targetLatencyMs} ms and stays narrow.`,
    settings: { ratePerSec: 4, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: true, minRatePerSec: 0.5, targetLatencyMs: 300, steps: 10, hosts: 2, n: 0, latencyMs: 100, compare: false },
    hosts: (s) => [
      { host: 'fast.example', links: Infinity },
      { host: 'slow.example', links: Infinity, latencyMs: 2 * s.targetLatencyMs },
    ],
    fill: { links: Infinity },
  },
};

// ---- state -----------------------------------------------------------------------------------------------------
let scenario = 'discover';
let settings = { ...DEFAULTS, ...SCENARIOS.discover.settings };
let speed = 1;
let clockMs = 0; // the virtual clock (ms since the scenario started)
// the part of the run the timelines show: `spanMs` of virtual time ending at `endMs` (null: the present, followed)
const view = { spanMs: VIEW_MS, endMs: null };
let pointer = null; // { lane, t }: where the pointer is over a timeline
let limiter = null; // one Limiter for every layered lane (one registry, many hosts), as a crawler would hold
let lanes = [];
let configError = '';
let auditCursor = 0;
let textDue = 0;
let lastFrame = null;
let drawDirty = true;
// live mode: the lanes of the hosts the gateway token has used, by host, and the gateway client
let mode = 'simulated'; // 'simulated' | 'live'
const liveLanes = new Map();
let liveSince = NaN; // the gateway's clock when the page first heard from it with this token
const client = new GatewayClient({ periodMs: POLL_MS, onAnswer: liveAnswer, onChange: renderLiveStatus });
const frameWork = new Float64Array(FRAME_SAMPLES);
const frameGap = new Float64Array(FRAME_SAMPLES);
let frameCount = 0;

// ---- configuration ---------------------------------------------------------------------------------------------
function limiterConfig(s = settings) {
  const config = {
    ratePerSec: s.ratePerSec,
    burstCapacity: s.burstCapacity,
    minIntervalSec: s.minIntervalSec,
    maxConcurrency: s.maxConcurrency,
    maxBackoffSec: s.maxBackoffSec,
    maxRetries: s.maxRetries,
  };
  if (s.quotaLimit > 0) config.quota = { limit: s.quotaLimit, windowSec: s.quotaWindowSec };
  if (s.adaptive) config.adaptive = { minRatePerSec: s.minRatePerSec, targetLatencyMs: s.targetLatencyMs, steps: s.steps };
  return config;
}

// The settings as the JavaScript that builds the same limiter (with the module's warnings).
function snippet(s = settings) {
  const c = limiterConfig(s);
  const lines = Object.entries(c).map(([k, v]) => `  ${k}: ${typeof v === 'object' ? JSON.stringify(v).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ') : v},`);
  const warn = limiter ? limiter.warnings.map((w) => `// warning: ${w}\n`).join('') : '';
  return `import { Limiter } from 'hostpace';\n${warn}const limiter = new Limiter({\n${lines.join('\n')}\n});\n`;
}

// The gateway's [vars] (names as worker/src/config.rs reads them; values are strings in wrangler.toml).
function wranglerVars(s = settings) {
  const num = (v) => (Number.isInteger(v) ? v.toFixed(1) : String(v));
  const lines = [
    '[vars]',
    `CRAWL_RATE_PER_SEC = "${num(s.ratePerSec)}"`,
    `CRAWL_BURST_CAPACITY = "${num(s.burstCapacity)}"`,
    `CRAWL_MIN_INTERVAL_SEC = "${num(s.minIntervalSec)}"`,
    `CRAWL_MAX_CONCURRENCY = "${s.maxConcurrency}"`,
    `CRAWL_QUOTA_LIMIT = "${s.quotaLimit}"`,
    `CRAWL_QUOTA_WINDOW_SEC = "${num(s.quotaWindowSec)}"`,
    `CRAWL_MAX_BACKOFF_SEC = "${num(s.maxBackoffSec)}"`,
    `CRAWL_MAX_RETRIES = "${s.maxRetries}"`,
  ];
  if (s.adaptive) lines.push('# adaptive pacing has no gateway variable: every host runs at the configured rate');
  return `${lines.join('\n')}\n`;
}

// ---- the simulation --------------------------------------------------------------------------------------------
function hostSpecs() {
  const def = SCENARIOS[scenario];
  const specs = def.hosts(settings).slice(0, settings.hosts);
  for (let i = specs.length; i < settings.hosts; i++) specs.push({ host: `host${i + 1}.example`, ...def.fill });
  return specs;
}

// A simulated lane for host `spec`: a layered one on the shared limiter, or a bare token or leaky bucket.
function makeLane(spec, kind) {
  const lane = {
    kind, host: spec.host, url: `https://${spec.host}/`, spec,
    latencyMs: spec.latencyMs ?? settings.latencyMs,
    queued: spec.links, // links waiting (Infinity: the crawler always has more)
    retries: [], // attempt numbers of requests queued again after a 429/503
    made: 0, gaveUp: 0, dropped: 0,
    refused: [], refusedCount: 0, // times links were refused by robots.txt (never sent; the last LOG_KEEP kept)
    times: [], layers: [], waits: [], // the access log: departure times, the layer that set each wait, the wait
    askedMs: null, // when the link now waiting first asked to go
    inflight: [], // { doneMs, departMs, n, attempt, permitId }
    nextTryMs: 0, waitLayer: null,
    cooldowns: [], serverQuota: [], // [startMs, endMs] spans learnt from responses (drawn, and audited)
    violations: [], audited: 0, auditDirty: true, serverState: {},
    answers: [], // server answers that changed pacing: { atMs, status, text } (marked on the timeline)
    sampleT: [], sampleTokens: [], sampleDebt: [], // the token level over time (the chart under the timeline)
    capacity: 1, // the bucket's capacity at the last sample
    bucket: null, els: null,
  };
  if (kind === 'token') lane.bucket = new TokenBucket(settings.ratePerSec, settings.burstCapacity);
  if (kind === 'leaky') {
    lane.slotMs = Math.max(settings.minIntervalSec * 1000, 1000 / settings.ratePerSec);
    lane.bucket = new LeakyBucket(lane.slotMs);
  }
  return lane;
}

// Starts the scenario again at t=0 with the settings: a new limiter, new lanes, drawn at once.
function restart() {
  for (const lane of lanes) lane.bucket?.free();
  limiter?.free();
  limiter = null;
  lanes = [];
  clockMs = 0;
  view.endMs = null;
  pointer = null;
  configError = '';
  try {
    limiter = new Limiter(limiterConfig());
    const specs = hostSpecs();
    if (settings.compare) {
      lanes = ['token', 'leaky', 'layered'].map((kind) => makeLane(specs[0], kind));
    } else {
      lanes = specs.map((spec) => makeLane(spec, 'layered'));
    }
    for (const lane of lanes) {
      if (lane.kind === 'layered' && lane.spec.robots) {
        lane.robots = limiter.setRobots(lane.host, lane.spec.robots, USER_AGENT, 0);
        const rules = lane.spec.robots.split('\n').filter((l) => l && !/^user-agent:/i.test(l));
        lane.answers.push({ atMs: 0, status: 200, text: `robots.txt: ${rules.join(', ')}` });
      }
    }
    for (const lane of lanes) sample(lane, 0, true);
  } catch (e) {
    configError = e.message;
    for (const lane of lanes) lane.bucket?.free();
    lanes = [];
  }
  buildLanes();
  renderView();
  render(true);
}

// The lane's next link: what its host's robots.txt is asked about (every link of a lane shares its host's pacing).
function nextLink(lane) {
  const k = lane.made + lane.refusedCount + 1;
  return lane.spec.link ? `https://${lane.host}${lane.spec.link(k)}` : lane.url;
}

// When the lane's next link may go: ask the module; depart now if it says so, else come back when it says. A link
// the host's robots.txt disallows (as the module knows it) is refused and never departs.
function tryDepart(lane, t) {
  while (lane.kind === 'layered' && lane.queued > 0 && !limiter.allowed(nextLink(lane), t)) {
    if (lane.refused.length >= LOG_KEEP) lane.refused.splice(0, LOG_TRIM);
    lane.refused.push(t);
    lane.refusedCount += 1;
    lane.queued -= 1;
  }
  if (lane.queued <= 0) {
    lane.nextTryMs = Infinity;
    return;
  }
  let wait;
  let layer;
  if (lane.kind === 'layered') {
    const peek = limiter.peek(lane.url, t);
    wait = peek.waitMs;
    layer = peek.layer;
  } else {
    wait = lane.bucket.peek(t);
    layer = lane.kind === 'token' ? 'burst' : 'interval';
  }
  lane.askedMs ??= t;
  if (wait > 0) {
    lane.waitLayer = layer;
    lane.nextTryMs = t + wait;
    return;
  }
  let departMs;
  let permitId;
  if (lane.kind === 'layered') {
    const d = limiter.acquire(lane.url, t);
    if (!d.reserved) {
      lane.waitLayer = d.layer;
      lane.nextTryMs = t + Math.max(d.waitMs, 1);
      return;
    }
    departMs = d.departsMs;
    permitId = d.permitId;
    if (d.waitMs > 0) lane.waitLayer = d.layer;
  } else {
    departMs = t + lane.bucket.acquire(t);
  }
  if (lane.times.length >= LOG_KEEP) {
    // a suffix of a polite log is polite (audit starts it with a full bucket), so the audit stays exact about
    // what is kept
    lane.times.splice(0, LOG_TRIM);
    lane.layers.splice(0, LOG_TRIM);
    lane.waits.splice(0, LOG_TRIM);
    lane.dropped += LOG_TRIM;
  }
  lane.times.push(departMs);
  lane.layers.push(lane.waitLayer ?? 'none');
  lane.waits.push(departMs - lane.askedMs);
  lane.askedMs = null;
  lane.waitLayer = null;
  lane.queued -= 1;
  lane.made += 1;
  const attempt = lane.retries.length ? lane.retries.shift() : 1;
  const r = { departMs, arriveMs: departMs, doneMs: departMs + lane.latencyMs, n: lane.made, attempt, permitId };
  let i = lane.inflight.length;
  while (i > 0 && lane.inflight[i - 1].doneMs > r.doneMs) i--;
  lane.inflight.splice(i, 0, r);
  lane.nextTryMs = departMs;
  lane.auditDirty = true;
}

// The server's answer arrives: the layered lane's limiter learns from it; a 429/503 is retried if the module says so.
function respond(lane, t) {
  const r = lane.inflight.shift();
  const answer = (lane.spec.respond ?? ok)(r, lane.serverState);
  const retryable = hostpace.pushesBack(answer.status);
  if (lane.kind === 'layered') {
    const obs = limiter.observe(lane.url, { status: answer.status, headers: answer.headers }, lane.latencyMs, t);
    if (obs.cooldownUntilMs !== undefined) lane.cooldowns.push([t, obs.cooldownUntilMs]);
    if (obs.serverQuotaUntilMs !== undefined) lane.serverQuota.push([t, obs.serverQuotaUntilMs]);
    if (r.permitId !== undefined) limiter.release(lane.url, r.permitId);
    // marked: a cooldown, a server block, or a rate the server's RateLimit headers changed (not adaptive pacing)
    const published = Object.keys(answer.headers).some((h) => /ratelimit/i.test(h));
    if (retryable || obs.serverQuotaUntilMs !== undefined || (published && obs.ratePerSec[0] !== obs.ratePerSec[1])) {
      lane.answers.push({ atMs: t, status: answer.status, text: said(answer) });
    }
  } else if (retryable) {
    lane.answers.push({ atMs: t, status: answer.status, text: said(answer) });
    // a bare bucket learns nothing; what the server asked for is still drawn and audited
    lane.cooldowns.push([t, t + (answer.retryAfterMs ?? 0)]);
  }
  if (retryable) {
    if (limiter.retryVerdict(answer.status, r.attempt) === 'retry') {
      lane.queued += 1;
      lane.retries.push(r.attempt + 1);
    } else {
      lane.gaveUp += 1;
    }
  }
  lane.nextTryMs = Math.min(lane.nextTryMs, t);
  lane.auditDirty = true;
}

// The lane's token level at `t` as the module reports it, `[tokens, tokenDebt, capacity]`; null for a bare leaky
// bucket.
function tokenLevel(lane, t) {
  if (lane.kind === 'leaky') return null;
  if (lane.kind === 'token') {
    const tokens = lane.bucket.tokens(t);
    return [Math.max(0, tokens), Math.max(0, -tokens), lane.bucket.capacity];
  }
  const s = limiter.stats(lane.host, t);
  return s ? [s.tokens, s.tokenDebt, s.capacity] : [settings.burstCapacity, 0, settings.burstCapacity];
}

// Record the lane's token level for the chart: at every event (before and after it), and at least every SAMPLE_MS.
function sample(lane, t, always) {
  const n = lane.sampleT.length;
  if (!always && n && t - lane.sampleT[n - 1] < SAMPLE_MS) return;
  const level = tokenLevel(lane, t);
  if (!level) return;
  if (n >= SAMPLES_KEEP) for (const a of [lane.sampleT, lane.sampleTokens, lane.sampleDebt]) a.splice(0, 5000);
  lane.sampleT.push(t);
  lane.sampleTokens.push(level[0]);
  lane.sampleDebt.push(level[1]);
  lane.capacity = level[2]; // the chart's scale (adaptive pacing changes it)
}

// What a server's answer said that bears on pacing, as the mark on the timeline reads it.
function said(answer) {
  const h = answer.headers;
  if (h['retry-after'] !== undefined) return `${answer.status} Retry-After: ${h['retry-after']}`;
  if (h.ratelimit !== undefined) return `${answer.status} RateLimit: ${h.ratelimit}`;
  return String(answer.status);
}

// The simulation's next event: the earliest response or departure attempt of any lane.
function nextEvent() {
  // the earliest thing that happens; at equal times a response comes before a departure (it may stop it)
  let best = Infinity;
  let lane = null;
  let isResponse = false;
  for (const l of lanes) {
    const done = l.inflight.length ? l.inflight[0].doneMs : Infinity;
    if (done < best || (done === best && lane !== null && !isResponse)) {
      best = done;
      lane = l;
      isResponse = true;
    }
    if (l.nextTryMs < best) {
      best = l.nextTryMs;
      lane = l;
      isResponse = false;
    }
  }
  return { t: best, lane, isResponse };
}

// Runs the simulation's events up to `toMs` of virtual time.
function advanceTo(toMs) {
  for (let n = 0; n < MAX_EVENTS; n++) {
    const e = nextEvent();
    if (!e.lane || e.t > toMs) break;
    clockMs = Math.max(clockMs, e.t);
    sample(e.lane, clockMs, true);
    if (e.isResponse) respond(e.lane, clockMs);
    else tryDepart(e.lane, clockMs);
    sample(e.lane, clockMs, true);
  }
  clockMs = Math.max(clockMs, toMs);
  for (const lane of lanes) sample(lane, clockMs, false);
  drawDirty = true;
}

// Advances the virtual clock to the next event (or by a second when none is due).
function step() {
  const e = nextEvent();
  advanceTo(e.lane && Number.isFinite(e.t) && e.t > clockMs ? e.t : clockMs + 1000);
}

// ---- audit (the module's) --------------------------------------------------------------------------------------
function auditLane(lane) {
  if (lane.kind === 'live') {
    auditLiveLane(lane, hostpace.audit);
    return;
  }
  lane.auditDirty = false;
  if (typeof hostpace.audit !== 'function' || !limiter) return;
  const config = limiterConfig();
  if (lane.kind === 'layered') {
    // the host's own floor, as the module holds it (the configured floor raised by Crawl-delay)
    const stats = limiter.stats(lane.host, clockMs);
    if (stats) config.minIntervalSec = stats.intervalMs / 1000;
  }
  lane.violations = hostpace.audit(config, lane.times, auditCooldowns(lane), 0);
  lane.audited = lane.times.length;
}

// Audits every lane on the board whose log changed since its last audit.
function auditAll() {
  for (const lane of board()) if (lane.auditDirty) auditLane(lane);
}

// ---- levels (the module's) -------------------------------------------------------------------------------------
// What each layer holds at the clock. Tokens are never negative: what departures reserved ahead owe is `tokenDebt`.
function levels(lane) {
  if (lane.kind === 'live') return liveLevels(lane, presentMs()) ?? {};
  const t = clockMs;
  const reservedAhead = lane.times.length - upperBound(lane.times, t); // departures reserved after now
  if (lane.kind === 'token') {
    const tokens = lane.bucket.tokens(t);
    return { tokens: Math.max(0, tokens), tokenDebt: Math.max(0, -tokens), capacity: lane.bucket.capacity, reservedAhead };
  }
  if (lane.kind === 'leaky') {
    return { nextSlotInMs: Math.max(0, lane.bucket.nextSlotMs() - t), reservedAhead };
  }
  const s = limiter.stats(lane.host, t);
  if (!s) return { tokens: settings.burstCapacity, tokenDebt: 0, capacity: settings.burstCapacity, reservedAhead };
  return {
    tokens: s.tokens, tokenDebt: s.tokenDebt, capacity: s.capacity, nextSlotInMs: s.nextSlotInMs,
    intervalMs: s.intervalMs, reservedAhead,
    quotaUsed: s.quotaUsed, quotaLimit: s.quotaLimit, cooldownRemainingMs: s.cooldownRemainingMs,
    serverQuotaRemainingMs: s.serverQuotaRemainingMs, inFlight: s.inFlight, ratePerSec: s.ratePerSec,
    crawlDelayMs: s.crawlDelayMs, decisions: s.decisions,
  };
}

// ---- DOM -------------------------------------------------------------------------------------------------------
const $ = (sel) => document.querySelector(sel);
const form = $('#controls');
const lanesEl = $('#lanes');
const tokenField = $('#live-token');
const template = $('#lane-template');

// Builds the board's lanes from the template (and says why there are none, when there are none).
function buildLanes() {
  lanesEl.replaceChildren();
  for (const lane of board()) {
    const node = template.content.firstElementChild.cloneNode(true);
    node.dataset.kind = lane.kind;
    node.querySelector('.host').textContent = lane.host;
    node.querySelector('.kind').textContent = KIND_NAMES[lane.kind];
    node.setAttribute('aria-label', `${lane.host}, ${lane.kind}`);
    lane.els = {
      node,
      summary: node.querySelector('.summary'),
      level: node.querySelector('.level'),
      owed: node.querySelector('.owed'),
      slots: node.querySelector('.slots'),
      slotFill: node.querySelector('.slot-fill'),
      seats: node.querySelector('.seats'),
      quotaFill: node.querySelector('.quota-fill'),
      countdownFill: node.querySelector('.countdown-fill'),
      tokens: node.querySelector('.tokens'),
      slot: node.querySelector('.slot'),
      quota: node.querySelector('.quota'),
      cooldown: node.querySelector('.cooldown'),
      inflight: node.querySelector('.inflight'),
      rate: node.querySelector('.rate'),
      canvas: node.querySelector('canvas.timeline'),
      chart: node.querySelector('canvas.chart'),
      differs: node.querySelector('.differs'),
      text: {},
      style: new Map(),
    };
    // a bare bucket has no quota, cooldown, permits or adaptive rate (and a leaky one no tokens): those rows go
    if (lane.kind === 'token' || lane.kind === 'leaky') {
      const shown = lane.kind === 'token' ? ['tokens', 'slot'] : ['slot'];
      for (const key of ['tokens', 'slot', 'quota', 'cooldown', 'inflight', 'rate']) {
        if (!shown.includes(key)) lane.els[key].closest('.levels > div').hidden = true;
      }
    }
    lane.els.chart.hidden = lane.kind === 'leaky';
    lane.els.chart.setAttribute('aria-label', `Token level of ${lane.host} over the part of the run in view`);
    // the gateway reports no departures reserved ahead: a live lane's slot shows the next one's countdown only
    lane.els.slots.append(...cells(lane.kind === 'live' ? 0 : SLOT_CELLS));
    lane.els.seats.append(...cells(seatCount(lane)));
    lanesEl.append(node);
  }
  if (mode === 'live' && !liveList.length) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'No host yet: each host this token sends requests to through the gateway gets a lane here.';
    lanesEl.append(p);
  } else if (mode === 'simulated' && configError) {
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = `No lanes: ${configError}`;
    lanesEl.append(p);
  }
  sizeCanvases();
}

const KIND_NAMES = {
  token: 'token bucket only', leaky: 'leaky bucket only', layered: 'hostpace (layered)', live: 'through the gateway (live)',
};

// Permits drawn as seats on a lane: the configured concurrency (the gateway's, for a live lane), at most MAX_SEATS.
function seatCount(lane) {
  const permits = lane.kind === 'live' ? lane.report?.policy.maxConcurrency ?? 0 : settings.maxConcurrency;
  return Math.min(permits, MAX_SEATS);
}

// Sizes each lane's canvases to their CSS width at the device's pixel ratio.
function sizeCanvases() {
  const dpr = window.devicePixelRatio || 1;
  for (const lane of board()) {
    const c = lane.els.canvas;
    const w = Math.max(100, Math.round(c.clientWidth * dpr));
    const h = Math.round(TIMELINE_PX * dpr);
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const chart = lane.els.chart;
    const ch = Math.round(CHART_PX * dpr);
    if (chart.width !== w || chart.height !== ch) { chart.width = w; chart.height = ch; }
  }
  drawDirty = true;
}

const cells = (n) => Array.from({ length: n }, () => document.createElement('i'));

// A number as a person reads it: at most `digits` decimals, no trailing zeros (2.200000080180004 → "2.2").
const num = (x, digits = 1) => String(Number(x.toFixed(digits)));

// Set a style property or an attribute only when it changes (the text readouts refresh at 10 Hz).
function setStyle(lane, el, prop, value) {
  const key = `${el.className}.${prop}`;
  if (lane.els.style.get(key) !== value) {
    lane.els.style.set(key, value);
    el.style[prop] = value;
  }
}

// Marks the first `taken` cells of a row of slots or seats as taken.
function fillCells(el, taken) {
  for (let i = 0; i < el.children.length; i++) el.children[i].classList.toggle('taken', i < taken);
}

const sec = (ms) => (ms === undefined ? '—' : ms === 0 ? '0 s' : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`);
// Sets a lane's text readout only when it changes.
function setText(lane, key, value) {
  if (lane.els.text[key] !== value) {
    lane.els.text[key] = value;
    lane.els[key].textContent = value;
  }
}

// The text readouts and level bars of every lane, at the present.
function renderText() {
  $('#clock').value = `${(clockMs / 1000).toFixed(1)} s`;
  renderView();
  const now = presentMs();
  for (const lane of board()) {
    const lv = levels(lane);
    const isLive = lane.kind === 'live';
    const v = lane.violations.length;
    if (isLive) {
      // the gateway's own line for the host, dated when the gateway has not answered for a while
      const stale = now - lane.reportAtMs > 3 * POLL_MS ? `as of ${clockTime(lane.reportAtMs)} · ` : '';
      setText(lane, 'summary', stale + lane.summary);
    } else {
      const queued = lane.queued === Infinity ? 'links keep coming' : `${lane.queued} queued`;
      setText(lane, 'summary', `${lane.times.length + lane.dropped} sent · ${queued} · ${v} audit violation${v === 1 ? '' : 's'}` +
        (lane.gaveUp ? ` · ${lane.gaveUp} given up` : '') +
        (lane.refusedCount ? ` · ${lane.refusedCount} refused by robots.txt` : ''));
    }
    // the token bucket: its level, and what is owed below the rim
    const capacity = lv.capacity ?? 1;
    const level = lv.tokens === undefined ? 0 : Math.min(1, lv.tokens / capacity);
    const owed = lv.tokenDebt ? Math.min(1, lv.tokenDebt / capacity) : 0;
    setStyle(lane, lane.els.level, 'height', `${(level * 100).toFixed(1)}%`);
    setStyle(lane, lane.els.owed, 'height', `${(owed * 0.6).toFixed(3)}rem`);
    setText(lane, 'tokens', lv.tokens === undefined ? '—'
      : `${num(lv.tokens)} of ${num(capacity, 2)}${lv.tokenDebt >= 0.05 ? ` · ${num(lv.tokenDebt)} owed` : ''}`);
    // the leaky layer: the time left until its next slot (a bar over one slot's length), and the future slots
    // already reserved
    const slotMs = lv.intervalMs || lane.slotMs || 1000 / (isLive ? lv.ratePerSec || 1 : settings.ratePerSec);
    setStyle(lane, lane.els.slotFill, 'width', `${(Math.min(1, (lv.nextSlotInMs ?? 0) / slotMs) * 100).toFixed(1)}%`);
    fillCells(lane.els.slots, lv.reservedAhead ?? 0);
    const floor = lv.intervalMs ? ` (floor ${sec(lv.intervalMs)}${lv.crawlDelayMs ? ', Crawl-delay' : ''})` : '';
    const next = lv.nextSlotInMs === undefined ? '' : `next in ${sec(lv.nextSlotInMs)}${floor}`;
    setText(lane, 'slot', isLive ? next || '—' : `${lv.reservedAhead} reserved ahead${next ? ` · ${next}` : ''}`);
    // the quota: a window that fills
    setStyle(lane, lane.els.quotaFill, 'width', lv.quotaLimit ? `${(Math.min(1, lv.quotaUsed / lv.quotaLimit) * 100).toFixed(1)}%` : '0%');
    setText(lane, 'quota', lv.quotaLimit ? `${lv.quotaUsed} of ${lv.quotaLimit} in ${num(lv.quotaWindowSec ?? settings.quotaWindowSec)} s`
      : lane.kind === 'layered' || isLive ? 'off' : '—');
    // the cooldown or the server's block: a countdown
    const block = lv.cooldownRemainingMs > 0 ? ['cooldown', lv.cooldownRemainingMs, lane.cooldowns]
      : lv.serverQuotaRemainingMs > 0 ? ['server quota', lv.serverQuotaRemainingMs, lane.serverQuota] : null;
    const span = block?.[2].at(-1);
    const total = span ? Math.max(1, span[1] - span[0]) : 1;
    setStyle(lane, lane.els.countdownFill, 'width', block ? `${(Math.min(1, block[1] / total) * 100).toFixed(1)}%` : '0%');
    setText(lane, 'cooldown', lv.cooldownRemainingMs === undefined ? '—'
      : block ? `${block[0] === 'cooldown' ? '' : 'server quota '}${sec(block[1])} left` : 'none');
    // permits: seats taken
    const permits = lv.maxConcurrency ?? settings.maxConcurrency;
    if (lane.els.seats.children.length !== seatCount(lane)) lane.els.seats.replaceChildren(...cells(seatCount(lane)));
    fillCells(lane.els.seats, lv.inFlight ?? 0);
    setText(lane, 'inflight', lv.inFlight === undefined ? '—'
      : permits > 0 ? `${lv.inFlight} of ${permits} taken` : `${lv.inFlight} in flight (no limit)`);
    setText(lane, 'rate', lv.ratePerSec === undefined ? '—' : `${num(lv.ratePerSec, 2)}/s` +
      (lv.serverRateCap !== undefined ? ` (the server's policy caps it at ${num(lv.serverRateCap, 2)}/s)` : ''));
    setText(lane, 'differs', isLive ? liveVerdict(lane) : settings.compare ? accessLogLine(lane) : '');
    lane.els.canvas.setAttribute('aria-label',
      `Access log of ${lane.host} (${lane.kind}): ${lane.times.length + lane.dropped} departures, ${v} audit violations`);
  }
}

// A live lane's verdict: the module's audit of the departures seen, with the tolerance it was given.
function liveVerdict(lane) {
  const head = `Audit (the module's, ${TOLERANCE_MS} ms tolerance for network jitter)`;
  if (lane.auditError) return `${head}: not possible: ${lane.auditError}`;
  const n = lane.times.length + lane.dropped;
  const v = lane.violations.length;
  if (!v) return `${head}: no violation in ${n} departure${n === 1 ? '' : 's'} seen`;
  const kinds = new Map();
  for (const x of lane.violations) kinds.set(x.kind, (kinds.get(x.kind) ?? 0) + 1);
  const which = [...kinds].map(([k, c]) => `${c} ${k}`).join(', ');
  return `${head}: ${v} violation${v === 1 ? '' : 's'} (${which}) in ${n} departure${n === 1 ? '' : 's'} seen`;
}

// In compare mode, what a lane's access log shows that the others' do not, in one line: its busiest second, its
// two closest departures, and what went during a Retry-After.
function accessLogLine(lane) {
  const ts = lane.times;
  let busiest = 0;
  let closest = Infinity;
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i] - ts[j] >= 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
    if (i > 0) closest = Math.min(closest, ts[i] - ts[i - 1]);
  }
  const during = ts.filter((t) => lane.cooldowns.some(([a, b]) => t > a && t < b)).length;
  return `Access log: at most ${busiest} in one second · the closest two ${closest === Infinity ? '—' : sec(closest)} apart` +
    (lane.cooldowns.length ? ` · ${during} sent during a Retry-After` : '');
}

// The time axis a lane's timeline and chart share: the part of the run in view across canvas `c` (drawn
// `cssHeight` px high), `x(t)` in canvas pixels. `start` and `VIEW` are the view's first instant and its span.
function axis(c, cssHeight) {
  const W = c.width;
  const H = c.height;
  const dpr = H / cssHeight;
  const { startMs: start, spanMs: VIEW } = viewWindow();
  const pad = PAD_PX * dpr;
  const x = (t) => pad + ((t - start) / VIEW) * (W - 2 * pad);
  return { ctx: c.getContext('2d'), W, H, dpr, start, VIEW, pad, x };
}

// One lane's access log over the part of the run in view.
function drawLane(lane) {
  const { ctx, W, H, dpr, start, VIEW, x } = axis(lane.els.canvas, TIMELINE_PX);
  ctx.clearRect(0, 0, W, H);
  // a time grid (lines every `grid` ms, labels every five lines) that stays legible at any zoom
  const grid = VIEW <= 30_000 ? 1000 : VIEW <= 150_000 ? 5000 : 30_000;
  ctx.fillStyle = '#e6e8ec';
  for (let s = Math.ceil(start / grid) * grid; s <= start + VIEW; s += grid) {
    ctx.fillRect(Math.round(x(s)), 0, 1, H);
  }
  ctx.fillStyle = '#5c6370';
  ctx.font = `${10 * dpr}px system-ui, sans-serif`;
  for (let s = Math.ceil(start / (5 * grid)) * 5 * grid; s <= start + VIEW; s += 5 * grid) {
    const text = gridLabel(s);
    if (mode === 'live' && x(s) + 2 * dpr + ctx.measureText(text).width > W) break; // a time of day is shown whole
    ctx.fillText(text, x(s) + 2 * dpr, H - 2 * dpr);
  }
  // spans the server imposed
  const span = (spans, color) => {
    ctx.fillStyle = color;
    for (const [a, b] of spans) {
      if (b < start || a > start + VIEW) continue;
      ctx.fillRect(x(a), 0, Math.max(1, x(b) - x(a)), H);
    }
  };
  span(lane.cooldowns, 'rgba(214, 40, 40, 0.14)');
  span(lane.serverQuota, 'rgba(140, 90, 43, 0.16)');
  // departures, stacked when they share a pixel column; a full column says how many it holds
  const base = H - 14 * dpr;
  const mark = MARK_PX * dpr;
  const step = STACK_PX * dpr;
  const maxStack = Math.floor((base - mark - 10 * dpr) / step);
  const markW = Math.max(3, 3 * dpr);
  const label = (px, count) => {
    ctx.fillStyle = '#111';
    ctx.fillText(`×${count}`, px + markW + 2 * dpr, base - mark - maxStack * step + 10 * dpr);
  };
  let col = -1;
  let stack = 0;
  const end = upperBound(lane.times, start + VIEW);
  for (let i = lowerBound(lane.times, start); i < end; i++) {
    const px = Math.floor(x(lane.times[i]));
    if (px === col) {
      stack++;
    } else {
      if (stack >= maxStack) label(col, stack + 1);
      col = px;
      stack = 0;
    }
    if (stack < maxStack) {
      ctx.fillStyle = LAYER_COLORS[lane.layers[i]] ?? '#000';
      ctx.fillRect(px, base - mark - stack * step, markW, mark);
    }
  }
  if (stack >= maxStack) label(col, stack + 1);
  // links robots.txt refused: a ✕ above the baseline where the departure would have been asked for
  ctx.strokeStyle = VIOLATION_COLOR;
  ctx.lineWidth = Math.max(1, dpr);
  for (let i = lowerBound(lane.refused, start); i < upperBound(lane.refused, start + VIEW); i++) {
    const px = x(lane.refused[i]);
    const y = base - mark - maxStack * step + 2 * dpr;
    const r = 3 * dpr;
    ctx.beginPath();
    ctx.moveTo(px - r, y - r);
    ctx.lineTo(px + r, y + r);
    ctx.moveTo(px + r, y - r);
    ctx.lineTo(px - r, y + r);
    ctx.stroke();
  }
  // audit violations: a triangle over the departure that broke a rule
  ctx.fillStyle = VIOLATION_COLOR;
  for (const v of lane.violations) {
    if (v.atMs < start || v.atMs > start + VIEW) continue;
    const px = x(v.atMs);
    ctx.beginPath();
    ctx.moveTo(px - 4 * dpr, 0);
    ctx.lineTo(px + 4 * dpr, 0);
    ctx.lineTo(px, 7 * dpr);
    ctx.fill();
  }
  // the waiting link: where the module says it may go
  const now = presentMs();
  if (Number.isFinite(lane.nextTryMs) && lane.nextTryMs > now && lane.nextTryMs <= start + VIEW && lane.queued > 0) {
    ctx.strokeStyle = LAYER_COLORS[lane.waitLayer] ?? '#000';
    ctx.lineWidth = dpr;
    const px = x(Math.min(lane.nextTryMs, start + VIEW));
    ctx.strokeRect(px, base - mark, markW, mark);
  }
  // the server's answers that changed pacing: a flag at the instant, with what it said
  ctx.font = `${9 * dpr}px system-ui, sans-serif`;
  for (const a of lane.answers) {
    if (a.atMs < start || a.atMs > start + VIEW) continue;
    const px = Math.round(x(a.atMs));
    ctx.fillStyle = a.status >= 400 ? VIOLATION_COLOR : LAYER_COLORS.serverQuota;
    ctx.fillRect(px, 8 * dpr, Math.max(1, dpr), base - 8 * dpr);
    ctx.fillText(a.text, px + 2 * dpr, 16 * dpr);
  }
  // now, when in view
  if (now <= start + VIEW) {
    ctx.fillStyle = '#111';
    ctx.fillRect(Math.round(x(now)), 0, Math.max(1, dpr), H - 12 * dpr);
  }
  // the departure described under the pointer
  if (pointer?.lane === lane && pointer.atMs !== undefined) {
    ctx.strokeStyle = '#111';
    ctx.lineWidth = dpr;
    ctx.strokeRect(Math.floor(x(pointer.atMs)) - 2 * dpr, base - mark - 2 * dpr, markW + 4 * dpr, mark + 4 * dpr);
  }
}

// The token level over the part of the run in view, on the timeline's time axis: tokens above the grey line (up
// to the capacity), tokens owed below it.
function drawChart(lane) {
  const { ctx, W, H, dpr, start, VIEW, pad, x } = axis(lane.els.chart, CHART_PX);
  const zero = Math.round(H * 0.68);
  const capacity = lane.capacity;
  const y = (tokens, debt) => zero - (Math.min(tokens, capacity) / capacity) * (zero - dpr) +
    (Math.min(debt, capacity) / capacity) * (H - zero - dpr);
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#c9ced6';
  ctx.fillRect(pad, zero, W - 2 * pad, Math.max(1, dpr));
  const from = Math.max(0, lowerBound(lane.sampleT, start) - 1);
  const to = Math.min(lane.sampleT.length, upperBound(lane.sampleT, start + VIEW) + 1);
  if (to - from < 1) return;
  ctx.beginPath();
  for (let i = from; i < to; i++) {
    const px = x(lane.sampleT[i]);
    const py = y(lane.sampleTokens[i], lane.sampleDebt[i]);
    if (i === from) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.strokeStyle = LAYER_COLORS.burst;
  ctx.lineWidth = 1.5 * dpr;
  ctx.stroke();
}

// ---- moving in time ----------------------------------------------------------------------------------------------
// The part of the run in view: the last `spanMs` up to the present while following it, else up to `endMs`.
function viewWindow() {
  const now = presentMs();
  const endMs = view.endMs === null ? now : Math.min(view.endMs, now);
  return { startMs: Math.max(originMs(), endMs - view.spanMs), spanMs: view.spanMs, following: view.endMs === null };
}

// Shows `spanMs` of the run ending at `endMs` (null: the present, followed).
function setView(endMs, spanMs = view.spanMs) {
  view.spanMs = Math.max(MIN_VIEW_MS, Math.min(MAX_VIEW_MS, spanMs));
  // the view's end, kept within the run; at the present it follows it again
  const now = presentMs();
  const end = Math.max(Math.min(originMs() + view.spanMs, now), Math.min(endMs, now));
  view.endMs = endMs === null || end >= now ? null : end;
  pointer = null;
  drawDirty = true;
  renderView();
}

// Moves the view as the timeline buttons say: 'earlier', 'later', 'zoom-in', 'zoom-out', 'follow'.
function moveView(action) {
  const w = viewWindow();
  const end = w.startMs + w.spanMs;
  if (action === 'earlier') setView(Math.max(originMs() + w.spanMs / 2, end - w.spanMs / 2));
  else if (action === 'later') setView(end + w.spanMs / 2);
  else if (action === 'zoom-in') setView(w.following ? null : end - w.spanMs / 4, w.spanMs / 2);
  else if (action === 'zoom-out') setView(w.following ? null : end + w.spanMs / 2, w.spanMs * 2);
  else if (action === 'follow') setView(null);
  else throw new Error(`unknown timeline action: ${action}`);
}

// Says which part of the run the timelines show, and whether they follow the present.
function renderView() {
  const w = viewWindow();
  const at = mode === 'live' ? clockTime : sec;
  $('#view-range').value = `showing ${at(w.startMs)} – ${at(w.startMs + w.spanMs)}${w.following ? ' (the present)' : ''}`;
  for (const b of document.querySelectorAll('[data-view="follow"]')) b.setAttribute('aria-pressed', String(w.following));
}

// The overview strip: the whole run, every lane's departures as ticks, and the part in view.
function drawOverview() {
  const c = $('#overview');
  const dpr = window.devicePixelRatio || 1;
  const W = Math.max(100, Math.round(c.clientWidth * dpr));
  const H = Math.round(28 * dpr);
  if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, W, H);
  const shown = board();
  const origin = originMs();
  const runMs = Math.max(presentMs() - origin, view.spanMs);
  const x = (t) => ((t - origin) / runMs) * W;
  ctx.fillStyle = 'rgba(214, 40, 40, 0.25)';
  for (const lane of shown) for (const [a, b] of lane.cooldowns) ctx.fillRect(x(a), 0, Math.max(1, x(b) - x(a)), H);
  const rowH = H / Math.max(1, shown.length);
  ctx.fillStyle = '#5c6370';
  // one tick per pixel column that holds a departure: after each tick, skip to the first departure of the next
  // column (a long log costs its columns, not its length)
  const msPerPx = runMs / W;
  shown.forEach((lane, k) => {
    const ts = lane.times;
    for (let i = 0; i < ts.length;) {
      const px = Math.floor(x(ts[i]));
      ctx.fillRect(px, k * rowH + rowH * 0.2, 1, Math.max(1, rowH * 0.6));
      const j = lowerBound(ts, origin + (px + 1) * msPerPx);
      i = j > i ? j : i + 1;
    }
  });
  const w = viewWindow();
  ctx.strokeStyle = '#1d5fd1';
  ctx.lineWidth = 2 * dpr;
  ctx.strokeRect(x(w.startMs) + dpr, dpr, Math.max(2 * dpr, x(w.startMs + w.spanMs) - x(w.startMs) - 2 * dpr), H - 2 * dpr);
}

// What the pointer is over, while paused: the departure nearest it on that lane's timeline (within POINTER_PX).
function describePointer(lane, clientX) {
  const c = lane.els.canvas;
  const rect = c.getBoundingClientRect();
  const { startMs, spanMs } = viewWindow();
  const t = startMs + ((clientX - rect.left - PAD_PX) / (rect.width - 2 * PAD_PX)) * spanMs;
  const tol = (POINTER_PX / (rect.width - 2 * PAD_PX)) * spanMs;
  // the nearer of the departures on either side of `t`, if it is close enough
  const j = lowerBound(lane.times, t);
  const near = [j - 1, j].filter((k) => k >= 0 && k < lane.times.length && Math.abs(lane.times[k] - t) <= tol);
  const i = near.sort((a, b) => Math.abs(lane.times[a] - t) - Math.abs(lane.times[b] - t))[0];
  pointer = { lane, i, atMs: lane.times[i] };
  $('#pointer').textContent = i === undefined ? '' : lane.kind === 'live' ? liveDeparture(lane, i)
    : `${lane.host}: departure ${lane.dropped + i + 1} at ${sec(lane.times[i])}, waited ${sec(lane.waits[i])}, ` +
      `set by ${layerName(lane.layers[i])}`;
  drawDirty = true;
  return pointer;
}

// A live lane's departure `i` in words: when it left (the gateway's clock), its wait and what set it, its answer.
function liveDeparture(lane, i) {
  const status = lane.statuses[i];
  const answer = status === null ? 'no answer reported yet' : status === 0 ? 'no answer came' : `answered ${status}`;
  return `${lane.host}: ${lane.purposes[i] === 'robots' ? 'robots.txt ' : ''}departure at ${clockTime(lane.times[i], true)}, ` +
    `waited ${sec(lane.waits[i])}, set by ${layerName(lane.layers[i])}, ${answer}`;
}

const LAYER_NAMES = {
  none: 'nothing (went at once)', burst: 'the token bucket', interval: 'the interval', quota: 'the quota',
  cooldown: 'the cooldown', concurrency: 'concurrency', serverQuota: 'the server quota',
};
const layerName = (layer) => LAYER_NAMES[layer] ?? layer;

// The first index of sorted `arr` whose value is above `v`.
function upperBound(arr, v) {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Draws what changed: the text readouts at 10 Hz, the timelines, charts and overview when dirty. One present is
// used for the whole of it (live mode's clock moves while it draws).
function render(force = false) {
  const now = performance.now();
  renderNow = presentMs();
  try {
    if (force || now >= textDue) {
      textDue = now + TEXT_EVERY_MS;
      renderText();
    }
    if (force || drawDirty) {
      for (const lane of board()) {
        drawLane(lane);
        if (lane.kind !== 'leaky') drawChart(lane);
      }
      drawOverview();
      drawDirty = false;
    }
  } finally {
    renderNow = null;
  }
}

// The controls as the settings, the scenario, the speed and the mode say.
function renderControls() {
  for (const el of form.elements) {
    if (!el.name || !(el.name in settings)) continue;
    if (el.type === 'checkbox') el.checked = Boolean(settings[el.name]);
    else if (document.activeElement !== el || Number(el.value) !== settings[el.name]) el.value = String(settings[el.name]);
  }
  for (const b of form.querySelectorAll('[data-scenario]')) {
    b.setAttribute('aria-pressed', String(mode === 'simulated' && b.dataset.scenario === scenario));
  }
  // live mode: offered only when a gateway serves the page; the simulation's controls step aside while it is on
  document.documentElement.dataset.mode = mode;
  $('#live-enter').hidden = !client.gateway;
  $('#live-enter').setAttribute('aria-pressed', String(mode === 'live'));
  for (const b of form.querySelectorAll('[data-speed]')) b.setAttribute('aria-pressed', String(Number(b.dataset.speed) === speed));
  $('#scenario-note').textContent = `${SCENARIOS[scenario].title}: ${SCENARIOS[scenario].note(settings)}`;
  // N says what it is in this scenario, and is hidden where it plays no part
  const knob = SCENARIOS[scenario].knob;
  $('#n-knob').hidden = knob === null;
  $('#n-knob .knob').textContent = knob ?? 'N (seconds)';
  $('#config-error').textContent = configError;
  $('#warnings').replaceChildren(...(limiter ? limiter.warnings : []).map((w) => {
    const li = document.createElement('li');
    li.textContent = w;
    return li;
  }));
  $('#export-js').value = snippet();
  $('#export-vars').value = wranglerVars();
}

// ---- URL hash (shareable state) --------------------------------------------------------------------------------
// Writes the scenario and its settings into the URL hash (the gateway token never goes there).
function writeHash() {
  const p = new URLSearchParams({ scenario });
  for (const k of Object.keys(DEFAULTS)) p.set(k, BOOLEAN_KEYS.includes(k) ? (settings[k] ? '1' : '0') : String(settings[k]));
  const hash = `#${p}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

// Reads a scenario and its settings from the URL hash; false when it names none.
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const name = p.get('scenario');
  if (!name || !(name in SCENARIOS)) return false;
  scenario = name;
  settings = { ...DEFAULTS, ...SCENARIOS[name].settings };
  for (const k of Object.keys(DEFAULTS)) {
    if (!p.has(k)) continue;
    const v = p.get(k);
    if (BOOLEAN_KEYS.includes(k)) settings[k] = v === '1' || v === 'true';
    else if (v !== '' && Number.isFinite(Number(v))) settings[k] = Number(v);
  }
  settings.hosts = clampHosts(settings.hosts);
  return true;
}

const clampHosts = (n) => Math.max(1, Math.min(20, Math.round(n) || 1));

// ---- live mode -------------------------------------------------------------------------------------------------
const MODE_KEY = 'hostpace-playground-mode'; // sessionStorage: a reload of a live page comes back live
let liveList = []; // liveLanes' values, in the order the hosts first appeared
let liveOrigin = NaN; // where the live run starts: its earliest departure seen, or when the gateway first answered

// The lanes on the board: the simulated ones, or in live mode the hosts the gateway token has used.
function board() {
  return mode === 'live' ? liveList : lanes;
}

let renderNow = null; // the present a render in progress uses
// The board's present: the virtual clock, or in live mode the gateway's clock (this page's plus its offset), held
// still while a render draws.
function presentMs() {
  if (mode !== 'live') return clockMs;
  return renderNow ?? Date.now() + client.offsetMs;
}

// Where the board's run starts: t=0 of the scenario, or the live run's start (the present until a first answer).
function originMs() {
  if (mode !== 'live') return 0;
  return Number.isFinite(liveOrigin) ? liveOrigin : presentMs();
}

// A gateway answer (`GET /v1/hosts?detail=1`): each host's report folded into its lane; a new host gets a lane.
function liveAnswer(body) {
  if (!Number.isFinite(liveSince)) liveSince = body.nowMs;
  let added = false;
  for (const entry of body.hosts) {
    if (!entry || typeof entry.host !== 'string') continue;
    let lane = liveLanes.get(entry.host);
    if (!lane) {
      lane = liveLane(entry.host);
      liveLanes.set(entry.host, lane);
      added = true;
    }
    mergeHost(lane, entry, body.nowMs);
  }
  liveList = [...liveLanes.values()];
  liveOrigin = liveSince;
  for (const lane of liveList) if (lane.times.length && lane.times[0] < liveOrigin) liveOrigin = lane.times[0];
  if (mode !== 'live') return;
  if (added) buildLanes();
  renderLivePolicy();
  drawDirty = true;
}

// Forgets every live lane (another token sees other hosts).
function resetLive() {
  liveLanes.clear();
  liveList = [];
  liveSince = NaN;
  liveOrigin = NaN;
  pointer = null;
  if (mode === 'live') {
    buildLanes();
    renderLivePolicy();
    render(true);
  }
}

// Uses the token in the field, if it is a new one or the gateway refused it (an empty field keeps the one in
// use): the lanes start again, polling goes on with it.
function useToken() {
  const token = tokenField.value.trim();
  if (token === '' || (client.uses(token) && !client.refused)) return;
  if (client.setToken(token)) resetLive();
}

// Forgets the token (sessionStorage included) and the lanes it showed.
function forgetToken() {
  tokenField.value = '';
  if (client.hasToken && client.setToken('')) resetLive();
}

// Switches the board to the live gateway (when one serves the page) and starts polling it.
function enterLive() {
  if (!client.gateway || mode === 'live') return;
  mode = 'live';
  switchedMode();
  client.start();
  if (!client.hasToken) tokenField.focus();
}

// Back to the simulated scenarios: polling stops, the live lanes are kept for a return.
function leaveLive() {
  if (mode !== 'live') return;
  client.stop();
  mode = 'simulated';
  switchedMode();
}

// What a change of mode redraws: the lanes, the controls, the view (it follows the present again).
function switchedMode() {
  try {
    if (mode === 'live') sessionStorage.setItem(MODE_KEY, 'live');
    else sessionStorage.removeItem(MODE_KEY);
  } catch {
    // storage refused: the mode lasts as long as the page
  }
  view.endMs = null;
  pointer = null;
  $('#pointer').textContent = '';
  buildLanes();
  renderControls();
  renderLivePolicy();
  renderLiveStatus();
  render(true);
}

// The connection's state in words: what /healthz said (configuration problems included) and how polling goes.
function renderLiveStatus() {
  const g = client.gateway;
  if (!g) return;
  const problems = g.ok === true ? '' : `The gateway reports problems${g.problems.length ? `: ${g.problems.join('; ')}` : ''}. `;
  const paused = mode === 'live' && client.hasToken && document.visibilityState === 'hidden' ? ' (paused while the tab is hidden)' : '';
  $('#live-status').textContent = `${problems}${client.status}${paused}`;
  $('#live-status').classList.toggle('error', Boolean(problems || client.counts.lastError));
  tokenField.placeholder = client.hasToken ? 'kept for this tab' : '';
}
document.addEventListener('visibilitychange', renderLiveStatus);

// The gateway's policy, as its latest report states it.
function renderLivePolicy() {
  const g = client.gateway;
  const p = liveList.find((l) => l.report)?.report.policy;
  $('#live-version').textContent = g ? `gateway ${g.version}` : '';
  if (!p) {
    $('#live-policy').textContent = '';
    return;
  }
  const quota = p.quota ? `${p.quota.limit} per ${num(p.quota.windowSec)} s` : 'off';
  $('#live-policy').textContent = `The gateway's policy: ${num(p.ratePerSec, 2)} requests/s, burst ${num(p.burstCapacity, 2)}, ` +
    `interval floor ${num(p.minIntervalSec, 2)} s (raised by a host's Crawl-delay), quota ${quota}, ` +
    `${p.maxConcurrency ? `${p.maxConcurrency} permits` : 'permits unlimited'}, max backoff ${num(p.maxBackoffSec)} s, ` +
    `${p.maxRetries} retries. Each lane's access log is audited against it with a ${TOLERANCE_MS} ms tolerance.`;
}

// An instant of the gateway's clock as a time of day (HH:MM:SS, with milliseconds when `withMs`).
function clockTime(ms, withMs = false) {
  if (!Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  const hms = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return withMs ? `${hms}.${String(d.getMilliseconds()).padStart(3, '0')}` : hms;
}

// A label of the timelines' time grid: seconds of the scenario, or the gateway's time of day.
function gridLabel(ms) {
  return mode === 'live' ? clockTime(ms) : `${ms / 1000}s`;
}

// ---- actions ---------------------------------------------------------------------------------------------------
function apply() {
  restart();
  renderControls();
  writeHash();
}

// Loads scenario `name` with its settings and replays it.
function loadScenario(name) {
  if (!(name in SCENARIOS)) throw new Error(`unknown scenario: ${name}`);
  scenario = name;
  settings = { ...settings, ...SCENARIOS[name].settings };
  apply();
}

// Changes some settings and replays the scenario.
function set(partial) {
  for (const [k, v] of Object.entries(partial)) {
    if (!(k in DEFAULTS)) throw new Error(`unknown setting: ${k}`);
    settings[k] = BOOLEAN_KEYS.includes(k) ? Boolean(v) : Number(v);
  }
  settings.hosts = clampHosts(settings.hosts);
  apply();
}

// Sets the virtual clock's speed (0 pauses it).
function setSpeed(x) {
  speed = x;
  lastFrame = null;
  renderControls();
}

form.addEventListener('change', (e) => {
  const el = e.target;
  if (!el.name || !(el.name in DEFAULTS)) return;
  if (el.type === 'checkbox') { set({ [el.name]: el.checked }); return; }
  if (el.value === '' || !Number.isFinite(Number(el.value))) return;
  let v = Number(el.value);
  if (INTEGER_KEYS.includes(el.name)) v = Math.round(v);
  set({ [el.name]: v });
});
form.addEventListener('submit', (e) => e.preventDefault());
// the token is used when it is entered (Enter, or leaving the field)
tokenField.addEventListener('change', useToken);
tokenField.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') { e.preventDefault(); useToken(); }
});
form.addEventListener('click', (e) => {
  const b = e.target.closest('button');
  if (!b) return;
  if (b.dataset.scenario) { leaveLive(); loadScenario(b.dataset.scenario); }
  else if (b.id === 'live-enter') enterLive();
  else if (b.id === 'live-leave') leaveLive();
  else if (b.id === 'live-connect') useToken();
  else if (b.id === 'live-forget') forgetToken();
  else if (b.dataset.speed !== undefined) setSpeed(Number(b.dataset.speed));
  else if (b.id === 'step') { setSpeed(0); step(); render(true); }
  else if (b.id === 'restart') { restart(); }
  else if (b.id === 'copy-link') {
    writeHash();
    navigator.clipboard?.writeText(location.href).then(() => { b.textContent = 'Link copied'; }, () => {});
  }
});
// moving in time: the timeline buttons, the wheel over the lanes (with Ctrl: zoom), a click on the overview
$('.timenav').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-view]');
  if (b) moveView(b.dataset.view);
});
lanesEl.addEventListener('wheel', (e) => {
  // a plain vertical wheel scrolls the page; sideways, or with Shift, it moves in time; with Ctrl it zooms
  const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY);
  if (!e.target.matches('canvas') || !(sideways || e.shiftKey || e.ctrlKey)) return;
  e.preventDefault();
  const w = viewWindow();
  const end = w.startMs + w.spanMs;
  const delta = sideways ? e.deltaX : e.deltaY;
  if (e.ctrlKey) setView(w.following ? null : end, w.spanMs * (delta > 0 ? 1.25 : 0.8));
  else setView(end + (delta / 500) * w.spanMs);
}, { passive: false });
$('#overview').addEventListener('click', (e) => {
  const rect = e.currentTarget.getBoundingClientRect();
  const origin = originMs();
  const t = origin + ((e.clientX - rect.left) / rect.width) * Math.max(presentMs() - origin, view.spanMs);
  setView(t + view.spanMs / 2);
});
// paused (and always in live mode), the pointer over a timeline describes the departure under it
lanesEl.addEventListener('pointermove', (e) => {
  if ((mode === 'simulated' && speed !== 0) || !e.target.matches('canvas')) return;
  const lane = board().find((l) => l.els.canvas === e.target);
  if (lane) describePointer(lane, e.clientX);
});
lanesEl.addEventListener('pointerleave', () => {
  pointer = null;
  $('#pointer').textContent = '';
  drawDirty = true;
});
window.addEventListener('hashchange', () => { if (readHash()) { restart(); renderControls(); } });
new ResizeObserver(() => { sizeCanvases(); render(true); }).observe(lanesEl);

// ---- the loop --------------------------------------------------------------------------------------------------
// One frame: the virtual clock advances (live mode: the present moves with the gateway's clock), a few lanes are
// re-audited, and what changed is drawn.
function frame(ts) {
  const t0 = performance.now();
  if (mode === 'live') {
    if (view.endMs === null) drawDirty = true; // following the present: the timelines scroll with it
  } else if (speed > 0 && lastFrame !== null) {
    advanceTo(clockMs + Math.min(ts - lastFrame, MAX_FRAME_MS) * speed);
  }
  const shown = board();
  for (let k = 0; k < AUDITS_PER_FRAME && shown.length; k++) {
    const lane = shown[auditCursor++ % shown.length];
    if (lane.auditDirty) auditLane(lane);
  }
  render();
  const i = frameCount++ % FRAME_SAMPLES;
  frameWork[i] = performance.now() - t0;
  frameGap[i] = lastFrame === null ? NaN : ts - lastFrame;
  lastFrame = ts;
  requestAnimationFrame(frame);
}

// Median, p95 and max of the frame samples in `buf`.
function percentiles(buf) {
  const n = Math.min(frameCount, FRAME_SAMPLES);
  const xs = Array.from(buf.subarray(0, n)).filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] : NaN);
  return { samples: xs.length, median: at(0.5), p95: at(0.95), max: xs.length ? xs[xs.length - 1] : NaN };
}

// ---- state for tests and the curious (read state, not pixels) --------------------------------------------------
// `window.playground`, in both modes:
//   ready                  true once the module runs (the simulation starts at once; the gateway check follows)
//   mode                   'simulated' | 'live'
//   nowMs                  the board's present: the virtual clock (ms since the scenario started), or in live mode
//                          the gateway's clock (epoch ms: Date.now() + liveStats().offsetMs)
//   lanes                  one entry per lane on the board, audited first. Simulated lanes: { host, kind ('token' |
//                          'leaky' | 'layered'), departures: [{ atMs, layer, waitMs }], violations, cooldowns,
//                          serverQuota, answers, robots, refused, queued, waitingFor, gaveUp, dropped, levels }.
//                          Live lanes, one per host the token has used, in the order they appeared: { host,
//                          kind: 'live', departures: [{ atMs, waitMs, layer, status, purpose }] (every departure
//                          seen, oldest first, deduplicated by atMs; status null until reported, 0 for no answer),
//                          violations (the module's audit: [{ kind, atMs, ... }]), auditError, toleranceMs,
//                          auditConfig (the config audited against), cooldowns and serverQuota ([startMs, endMs]
//                          from when the page first saw them), answers ([{ atMs, status, text }]: the 429/503
//                          answers, at their departure), levels ({ tokens, tokenDebt, capacity, nextSlotInMs,
//                          intervalMs, crawlDelayMs, nextDepartureInMs, quotaUsed, quotaLimit, quotaWindowSec,
//                          cooldownRemainingMs, serverQuotaRemainingMs, inFlight, maxConcurrency, ratePerSec,
//                          serverRateCap, decisions, throttled, asOfMs }: the latest report, times left counted
//                          down to nowMs), summary (the gateway's line), policy, robots, reportAtMs, dropped }
//   view, visible, chart   the part of the run the timelines show, the departures and token samples drawn in it
//                          (visible entries of live lanes also carry status and purpose)
//   moveView(action)       'earlier' | 'later' | 'zoom-in' | 'zoom-out' | 'follow', as the timeline buttons
//   frameStats()           { frames, workMs, frameIntervalMs } (each { samples, median, p95, max }); resetFrameStats()
// Live mode:
//   gatewayChecked         whether /healthz has been asked; gateway: null (no gateway: Live stays hidden) or
//                          { ok, version, problems } as /healthz said
//   enterLive(), leaveLive()   switch modes as the "Live gateway" and "Back to the simulated scenarios" buttons do
//                          (each returns the mode; enterLive does nothing without a gateway)
//   setToken(token)        use a token as the token field does (kept in sessionStorage; '' forgets it); false when
//                          it cannot be a bearer token
//   liveStatus             the connection's state, as the page says it
//   liveStats()            { polls (answers of /v1/hosts?detail=1, good or not), requests (every request live mode
//                          made, /healthz included), errors, lastError, periodMs, polling, inFlight, offsetMs }
//   nextLivePoll()         a promise of liveStats() once the next poll has been answered (it makes no request)
// Simulated mode: scenario, settings, config, configError, warnings, auditAvailable, exports, loadScenario(name),
// set(partial), setSpeed(x), restart(), pause(), advance(ms), step(), speed.
window.playground = {
  ready: true,
  get mode() { return mode; },
  get nowMs() { return presentMs(); },
  get speed() { return speed; },
  get scenario() { return scenario; },
  get settings() { return { ...settings }; },
  get config() { return limiterConfig(); },
  get configError() { return configError; },
  get warnings() { return limiter ? limiter.warnings : []; },
  get auditAvailable() { return typeof hostpace.audit === 'function'; },
  get exports() { return { js: snippet(), vars: wranglerVars() }; },
  get lanes() {
    auditAll();
    if (mode === 'live') {
      const now = presentMs();
      return liveList.map((lane) => liveLaneState(lane, now));
    }
    return lanes.map((lane) => ({
      host: lane.host, kind: lane.kind,
      departures: lane.times.map((atMs, i) => ({ atMs, layer: lane.layers[i], waitMs: lane.waits[i] })),
      violations: lane.violations.map((v) => ({ ...v })),
      cooldowns: lane.cooldowns.map((s) => [...s]),
      serverQuota: lane.serverQuota.map((s) => [...s]),
      answers: lane.answers.map((a) => ({ ...a })), // server answers that changed pacing (marked on the timeline)
      robots: lane.robots ? { ...lane.robots } : undefined,
      refused: [...lane.refused], // times links were refused by robots.txt
      queued: lane.queued === Infinity ? null : lane.queued,
      waitingFor: lane.queued > 0 && lane.nextTryMs > clockMs ? { atMs: lane.nextTryMs, layer: lane.waitLayer } : null,
      gaveUp: lane.gaveUp,
      dropped: lane.dropped, // departures older than the kept log
      levels: levels(lane),
    }));
  },
  /** The part of the run the timelines show: `{ startMs, spanMs, following }`. */
  get view() { return viewWindow(); },
  /** Each lane's departures drawn in the view (`atMs`, `layer`, `waitMs`). */
  get visible() {
    const { startMs, spanMs } = viewWindow();
    return board().map((lane) => {
      const out = [];
      for (let i = lowerBound(lane.times, startMs); i < upperBound(lane.times, startMs + spanMs); i++) {
        const d = { atMs: lane.times[i], layer: lane.layers[i], waitMs: lane.waits[i] };
        if (lane.kind === 'live') Object.assign(d, { status: lane.statuses[i], purpose: lane.purposes[i] });
        out.push(d);
      }
      return out;
    });
  },
  /** Each lane's token level in the chart's view: `[atMs, tokens, tokenDebt]` (none for a bare leaky bucket). */
  get chart() {
    const { startMs, spanMs } = viewWindow();
    return board().map((lane) => {
      const out = [];
      for (let i = lowerBound(lane.sampleT, startMs); i < upperBound(lane.sampleT, startMs + spanMs); i++) {
        out.push([lane.sampleT[i], lane.sampleTokens[i], lane.sampleDebt[i]]);
      }
      return out;
    });
  },
  /** Move in time as the timeline buttons do: 'earlier', 'later', 'zoom-in', 'zoom-out', 'follow'. */
  moveView(action) { moveView(action); render(true); return viewWindow(); },
  loadScenario, set, setSpeed, restart: apply,
  pause() { setSpeed(0); },
  advance(ms) { advanceTo(clockMs + ms); render(true); return clockMs; },
  step() { step(); render(true); return clockMs; },
  frameStats() { return { frames: Math.min(frameCount, FRAME_SAMPLES), workMs: percentiles(frameWork), frameIntervalMs: percentiles(frameGap) }; },
  resetFrameStats() { frameCount = 0; frameWork.fill(0); frameGap.fill(NaN); },
  get gatewayChecked() { return gatewayChecked; },
  get gateway() { return client.gateway ? { ...client.gateway, problems: [...client.gateway.problems] } : null; },
  enterLive() { enterLive(); return mode; },
  leaveLive() { leaveLive(); return mode; },
  setToken(token) {
    tokenField.value = String(token);
    if (client.uses(token)) return true;
    const ok = client.setToken(token);
    if (ok) resetLive();
    return ok;
  },
  get liveStatus() { return $('#live-status').textContent; },
  liveStats,
  async nextLivePoll() { await client.nextPoll(); return liveStats(); },
};

// The live mode's requests so far (see window.playground above).
function liveStats() {
  return {
    ...client.counts, periodMs: client.periodMs, polling: client.polling, inFlight: client.inFlight, offsetMs: client.offsetMs,
  };
}

// ---- start -----------------------------------------------------------------------------------------------------
if (!readHash()) settings = { ...DEFAULTS, ...SCENARIOS[scenario].settings };
restart();
renderControls();
writeHash();
document.documentElement.dataset.ready = 'true';
requestAnimationFrame(frame);
// Live mode is offered only when a gateway serves the page (its /healthz answers); from a static server it stays
// hidden and nothing else is asked
let gatewayChecked = false;
client.probe().then((gateway) => {
  gatewayChecked = true;
  document.documentElement.dataset.gateway = gateway ? 'yes' : 'no';
  if (!gateway) return;
  renderControls();
  renderLiveStatus();
  let wasLive = false;
  try { wasLive = sessionStorage.getItem(MODE_KEY) === 'live'; } catch { wasLive = false; }
  if (wasLive) enterLive();
});
