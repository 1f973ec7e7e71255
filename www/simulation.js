// The simulated crawl: the virtual clock, the crawler (one queue of links per host) and the servers (the
// scenario's scripted answers), over the module.
//
// Nothing here computes a wait. Every departure time, the layer that set it, every level and every audit verdict
// is an answer of the module (`Limiter.peek/acquire/observe/setRobots/allowed/stats/retryVerdict/release`, the
// primitives' `peek/acquire/tokens/nextSlotMs`, `pushesBack`, `audit`). The wait shown for a departure is
// measured, not computed: from when its link first asked to go until it went.
//
// The crawler waits in the scheduler, not the fetcher: a host's next link is reserved with `acquire` only once
// `peek` says it may go now, so a 429 that arrives while links are queued stops every later departure. When several
// hosts may go at the same instant, the one served least recently asks first (hosts of one site take turns).
//
// Grouped by site, the hosts of one site sit next to each other, and each site has a lane of its own: the site's
// levels (the module's `stats` of `*.example.com`) and its hosts' departures together, audited against the site's
// limits.

import * as hostpace from './pkg/browser.js';
import { SCENARIOS, ok } from './scenarios.js';
import { limiterConfig, siteAuditConfig } from './settings.js';
import { upperBound } from './sorted.js';
import { state } from './state.js';

const { Limiter, TokenBucket, LeakyBucket } = hostpace;

const MAX_EVENTS = 200_000; // per advance: a guard against a scenario that never lets time move
export const LOG_KEEP = 10_000; // departures kept per lane (the oldest 2,000 go when it is full; timelines show 24 s)
const LOG_TRIM = 2_000;
const SAMPLE_MS = 100; // the chart samples the token level at least this often (virtual time), and at every event
const SAMPLES_KEEP = 30_000; // samples kept per lane (the oldest 5,000 go when it is full)
const SAMPLES_TRIM = 5_000;
const USER_AGENT = 'hostpace-playground';

/** Starts the scenario again at t=0 with the settings: a new limiter and new lanes, and what happens at t=0.
 * A config the module refuses leaves no lanes and says why in `state.configError`. */
export function restart() {
  for (const lane of state.lanes) lane.bucket?.free();
  state.limiter?.free();
  state.limiter = null;
  state.lanes = [];
  state.sites = [];
  state.clockMs = 0;
  state.configError = '';
  try {
    state.limiter = new Limiter(limiterConfig(state.settings));
    const specs = hostSpecs();
    state.lanes = state.settings.compare
      ? ['token', 'leaky', 'layered'].map((kind) => makeLane(specs[0], kind))
      : specs.map((spec) => makeLane(spec, 'layered'));
    if (!state.settings.compare && state.settings.groupBy === 'site') groupBySite();
    for (const lane of state.lanes) {
      if (lane.kind === 'layered' && lane.spec.robots) {
        lane.robots = state.limiter.setRobots(lane.host, lane.spec.robots, USER_AGENT, 0);
        const rules = lane.spec.robots.split('\n').filter((l) => l && !/^user-agent:/i.test(l));
        lane.answers.push({ atMs: 0, status: 200, text: `robots.txt: ${rules.join(', ')}` });
      }
    }
    for (const lane of state.lanes) sample(lane, 0, true);
    advanceTo(0); // the links found at t=0 ask at once: every lane's host is known to the module from the start
  } catch (e) {
    state.configError = e.message;
    for (const lane of state.lanes) lane.bucket?.free();
    state.lanes = [];
    state.sites = [];
  }
}

/** Runs the simulation's events up to `toMs` of virtual time. */
export function advanceTo(toMs) {
  for (let n = 0; n < MAX_EVENTS; n++) {
    const e = nextEvent();
    if (!e.lane || e.t > toMs) break;
    state.clockMs = Math.max(state.clockMs, e.t);
    sample(e.lane, state.clockMs, true);
    if (e.lane.siteLane) sample(e.lane.siteLane, state.clockMs, true);
    if (e.isResponse) respond(e.lane, state.clockMs);
    else tryDepart(e.lane, state.clockMs);
    sample(e.lane, state.clockMs, true);
    if (e.lane.siteLane) sample(e.lane.siteLane, state.clockMs, true);
  }
  state.clockMs = Math.max(state.clockMs, toMs);
  for (const lane of state.lanes) sample(lane, state.clockMs, false);
  for (const site of state.sites) sample(site, state.clockMs, false);
  state.drawDirty = true;
}

/** Advances the virtual clock to the next event (or by a second when none is due). */
export function step() {
  const e = nextEvent();
  advanceTo(e.lane && Number.isFinite(e.t) && e.t > state.clockMs ? e.t : state.clockMs + 1000);
}

/** What a host new to a limiter with these settings starts at, in requests per second (the module's answer: a
 * limiter of its own reserves one departure to a host and reports its rate). NaN when the settings are refused. */
export function newHostRatePerSec(settings) {
  let limiter = null;
  try {
    limiter = new Limiter(limiterConfig(settings));
    limiter.acquire('https://new-host.example/', 0);
    return limiter.stats('new-host.example', 0)?.ratePerSec ?? NaN;
  } catch {
    return NaN;
  } finally {
    limiter?.free();
  }
}

/** Judges a simulated lane's access log with the module's `audit`, against the host's own floor as the module
 * holds it (the configured floor raised by Crawl-delay); a site's, its hosts' departures together against the
 * site's limits. */
export function auditSimLane(lane) {
  lane.auditDirty = false;
  if (typeof hostpace.audit !== 'function' || !state.limiter) return;
  if (lane.kind === 'site') {
    lane.violations = hostpace.audit(siteAuditConfig(state.settings), lane.times, [], 0);
    return;
  }
  const config = limiterConfig(state.settings);
  if (lane.kind === 'layered') {
    const stats = state.limiter.stats(lane.host, state.clockMs);
    if (stats) config.minIntervalSec = stats.intervalMs / 1000;
  }
  const cooldowns = lane.cooldowns.map(([startMs, endMs]) => ({ startMs, endMs }));
  lane.violations = hostpace.audit(config, lane.times, cooldowns, 0);
}

/** What each layer of a simulated lane holds at the clock: the module's `stats` of the host as it answers them
 * (a bare bucket: its own readings), and the departures reserved after now. Tokens are never negative: what
 * departures reserved ahead owe is `tokenDebt`. */
export function simLevels(lane) {
  const t = state.clockMs;
  const reservedAhead = lane.times.length - upperBound(lane.times, t);
  if (lane.kind === 'token') {
    const [tokens, tokenDebt, capacity] = tokenLevel(lane, t);
    return { tokens, tokenDebt, capacity, reservedAhead };
  }
  if (lane.kind === 'leaky') return { nextSlotInMs: Math.max(0, lane.bucket.nextSlotMs() - t), reservedAhead };
  if (lane.kind === 'site') {
    const quotaWindowSec = siteAuditConfig(state.settings).quota?.windowSec;
    return { ...state.limiter.stats(lane.host, t), quotaWindowSec, reservedAhead };
  }
  return { ...state.limiter.stats(lane.host, t), reservedAhead };
}

/** A simulated lane as `window.playground.lanes` shows it. */
export function simLaneState(lane) {
  return {
    host: lane.host, kind: lane.kind, site: lane.site,
    departures: lane.times.map((atMs, i) => ({ atMs, layer: lane.layers[i], waitMs: lane.waits[i] })),
    violations: lane.violations.map((v) => ({ ...v })),
    cooldowns: lane.cooldowns.map((s) => [...s]),
    serverQuota: lane.serverQuota.map((s) => [...s]),
    answers: lane.answers.map((a) => ({ ...a })), // server answers that changed pacing (marked on the timeline)
    robots: lane.robots ? { ...lane.robots } : undefined,
    refused: [...lane.refused], // times links were refused by robots.txt
    queued: lane.queued === Infinity ? null : lane.queued,
    waitingFor: lane.queued > 0 && lane.nextTryMs > state.clockMs ? { atMs: lane.nextTryMs, layer: lane.waitLayer } : null,
    gaveUp: lane.gaveUp,
    dropped: lane.dropped, // departures older than the kept log
    levels: simLevels(lane),
  };
}

/** A site lane as `window.playground.sites` shows it: the site, its hosts, their departures together (each with
 * its host), the audit of them against the site's limits, and the site's own levels. */
export function siteLaneState(site) {
  return {
    site: site.host,
    hosts: site.hosts.map((lane) => lane.host),
    departures: site.times.map((atMs, i) => ({ atMs, host: site.from[i], layer: site.layers[i], waitMs: site.waits[i] })),
    violations: site.violations.map((v) => ({ ...v })),
    dropped: site.dropped,
    levels: simLevels(site),
  };
}

// ---- lanes -----------------------------------------------------------------------------------------------------
function hostSpecs() {
  const { settings } = state;
  const def = SCENARIOS[state.scenario];
  const specs = def.hosts(settings).slice(0, settings.hosts);
  for (let i = specs.length; i < settings.hosts; i++) specs.push({ host: `host${i + 1}.example`, ...def.fill });
  return specs;
}

// Groups the lanes by site: each host's site as the module answers it (a limiter of its own that groups by site
// reserves one departure to the host and reports its site), the hosts of one site moved next to each other (the
// sites in the order their first host came), and a lane for each site. A host without a site keeps its lane alone.
function groupBySite() {
  const probe = new Limiter({ groupBy: 'site' });
  const groups = new Map(); // site (or the host, for a host without one) → its lanes
  try {
    for (const lane of state.lanes) {
      probe.acquire(lane.url, 0);
      lane.site = probe.stats(lane.host, 0)?.site ?? null;
      const key = lane.site ?? lane.host;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(lane);
    }
  } finally {
    probe.free();
  }
  state.lanes = [...groups.values()].flat();
  for (const lanes of groups.values()) {
    const site = lanes[0].site;
    if (site === null) continue;
    const siteLane = makeSiteLane(site, lanes);
    for (const lane of lanes) lane.siteLane = siteLane;
    state.sites.push(siteLane);
  }
}

// A site's lane: the site's key (`*.example.com`) as its host, its hosts' lanes, and their departures together.
// It sends nothing of its own: nothing is queued, nothing waits, no server answers it.
function makeSiteLane(site, hosts) {
  return {
    kind: 'site', host: site, site: null, hosts, siteLane: null,
    queued: 0, nextTryMs: Infinity, waitLayer: null, gaveUp: 0, dropped: 0,
    times: [], layers: [], waits: [], from: [], // the hosts' departures together, with each one's host
    refused: [], refusedCount: 0, cooldowns: [], serverQuota: [], answers: [],
    violations: [], auditDirty: true,
    sampleT: [], sampleTokens: [], sampleDebt: [], capacity: 1,
    els: null,
  };
}

// A simulated lane for host `spec`: a layered one on the shared limiter, or a bare token or leaky bucket. A bare
// leaky bucket is given the spacing of the configured rate and floor, the average the other lanes keep.
function makeLane(spec, kind) {
  const { settings } = state;
  const lane = {
    kind, host: spec.host, url: `https://${spec.host}/`, spec,
    site: null, siteLane: null, // grouped by site: the host's site (`*.example.com`) and its lane
    latencyMs: spec.latencyMs ?? settings.latencyMs,
    queued: spec.links, // links waiting (Infinity: the crawler always has more)
    retries: [], // attempt numbers of requests queued again after a 429/503
    made: 0, gaveUp: 0, dropped: 0,
    refused: [], refusedCount: 0, // times links were refused by robots.txt (never sent; the last LOG_KEEP kept)
    times: [], layers: [], waits: [], // the access log: departure times, the layer that set each wait, the wait
    askedMs: null, // when the link now waiting first asked to go
    lastDepartMs: -Infinity, // the host's latest departure (of hosts that may go at once, the least recent goes first)
    inflight: [], // { doneMs, departMs, n, attempt, permitId }
    nextTryMs: 0, waitLayer: null,
    cooldowns: [], serverQuota: [], // [startMs, endMs] spans learnt from responses (drawn, and audited)
    violations: [], auditDirty: true, serverState: {},
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

// The lane's next link: what its host's robots.txt is asked about (every link of a lane shares its host's pacing).
function nextLink(lane) {
  const k = lane.made + lane.refusedCount + 1;
  return lane.spec.link ? `https://${lane.host}${lane.spec.link(k)}` : lane.url;
}

// ---- the crawler and the servers -------------------------------------------------------------------------------
// When the lane's next link may go: ask the module; depart now if it says so, else come back when it says. A link
// the host's robots.txt disallows (as the module knows it) is refused and never departs.
function tryDepart(lane, t) {
  const { limiter } = state;
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
  const waited = departMs - lane.askedMs;
  logDeparture(lane, departMs, lane.waitLayer ?? 'none', waited);
  if (lane.siteLane) logDeparture(lane.siteLane, departMs, lane.waitLayer ?? 'none', waited, lane.host);
  lane.lastDepartMs = departMs;
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

// Adds a departure to a lane's log, in time order (a site's gathers several hosts'; `host` is the one it went to).
// A full log drops its oldest LOG_TRIM: a suffix of a polite log is polite (audit starts it with a full bucket), so
// the audit stays exact about what is kept.
function logDeparture(lane, atMs, layer, waitMs, host) {
  const arrays = lane.kind === 'site' ? [lane.times, lane.layers, lane.waits, lane.from] : [lane.times, lane.layers, lane.waits];
  if (lane.times.length >= LOG_KEEP) {
    for (const a of arrays) a.splice(0, LOG_TRIM);
    lane.dropped += LOG_TRIM;
  }
  const entry = [atMs, layer, waitMs, host];
  const i = upperBound(lane.times, atMs);
  if (i === lane.times.length) arrays.forEach((a, k) => a.push(entry[k]));
  else arrays.forEach((a, k) => a.splice(i, 0, entry[k]));
  lane.auditDirty = true;
}

// The server's answer arrives: the layered lane's limiter learns from it; it is retried if the module says so.
function respond(lane, t) {
  const { limiter } = state;
  const r = lane.inflight.shift();
  const answer = (lane.spec.respond ?? ok)(r, lane.serverState);
  const pushedBack = hostpace.pushesBack(answer.status, 'request');
  if (lane.kind === 'layered') {
    const obs = limiter.observe(lane.url, { status: answer.status, headers: answer.headers }, lane.latencyMs, t);
    if (obs.cooldownUntilMs !== undefined) lane.cooldowns.push([t, obs.cooldownUntilMs]);
    if (obs.serverQuotaUntilMs !== undefined) lane.serverQuota.push([t, obs.serverQuotaUntilMs]);
    if (r.permitId !== undefined) limiter.release(lane.url, r.permitId);
    // marked: a cooldown, a server block, or a rate the server's published policy changed (not adaptive pacing)
    const capped = obs.serverRateCap !== undefined && obs.ratePerSec[0] !== obs.ratePerSec[1];
    if (pushedBack || obs.serverQuotaUntilMs !== undefined || capped) {
      lane.answers.push({ atMs: t, status: answer.status, text: said(answer) });
    }
  } else if (pushedBack) {
    lane.answers.push({ atMs: t, status: answer.status, text: said(answer) });
    // a bare bucket learns nothing; what the server asked for is still drawn and audited
    lane.cooldowns.push([t, t + (answer.retryAfterMs ?? 0)]);
  }
  const verdict = limiter.retryVerdict(answer.status, r.attempt);
  if (verdict === 'retry') {
    lane.queued += 1;
    lane.retries.push(r.attempt + 1);
  } else if (verdict === 'giveUp') {
    lane.gaveUp += 1;
  }
  lane.nextTryMs = Math.min(lane.nextTryMs, t);
  lane.auditDirty = true;
}

// What a server's answer said that bears on pacing, as the mark on the timeline reads it.
function said(answer) {
  const h = answer.headers;
  if (h['retry-after'] !== undefined) return `${answer.status} Retry-After: ${h['retry-after']}`;
  if (h.ratelimit !== undefined) return `${answer.status} RateLimit: ${h.ratelimit}`;
  return String(answer.status);
}

// The simulation's next event: the earliest response or departure attempt of any lane; at equal times a response
// comes before a departure (it may stop it), and of departure attempts, the host's served least recently (a fair
// crawler: hosts that wait for one site take turns).
function nextEvent() {
  let best = Infinity;
  let lane = null;
  let isResponse = false;
  for (const l of state.lanes) {
    const done = l.inflight.length ? l.inflight[0].doneMs : Infinity;
    if (done < best || (done === best && lane !== null && !isResponse)) {
      best = done;
      lane = l;
      isResponse = true;
    }
    if (l.nextTryMs < best || (l.nextTryMs === best && lane !== null && !isResponse && l.lastDepartMs < lane.lastDepartMs)) {
      best = l.nextTryMs;
      lane = l;
      isResponse = false;
    }
  }
  return { t: best, lane, isResponse };
}

// ---- the token level (the chart) -------------------------------------------------------------------------------
// The lane's token level at `t` as the module reports it, `[tokens, tokenDebt, capacity]`; null for a bare leaky
// bucket. A bare token bucket's count goes below zero while departures are reserved ahead: that is its debt.
function tokenLevel(lane, t) {
  if (lane.kind === 'leaky') return null;
  if (lane.kind === 'token') {
    const tokens = lane.bucket.tokens(t);
    return [Math.max(0, tokens), Math.max(0, -tokens), lane.bucket.capacity];
  }
  const s = state.limiter.stats(lane.host, t);
  return s ? [s.tokens, s.tokenDebt, s.capacity] : null;
}

// Records the lane's token level for the chart: at every event (before and after it), and at least every SAMPLE_MS.
function sample(lane, t, always) {
  const n = lane.sampleT.length;
  if (!always && n && t - lane.sampleT[n - 1] < SAMPLE_MS) return;
  const level = tokenLevel(lane, t);
  if (!level) return;
  if (n >= SAMPLES_KEEP) for (const a of [lane.sampleT, lane.sampleTokens, lane.sampleDebt]) a.splice(0, SAMPLES_TRIM);
  lane.sampleT.push(t);
  lane.sampleTokens.push(level[0]);
  lane.sampleDebt.push(level[1]);
  lane.capacity = level[2]; // the chart's scale (adaptive pacing changes it)
}
