// hostpace playground, live mode: the hosts a gateway token has used, as the gateway reports them.
//
// Nothing here computes a wait either. Every departure, the layer that set its wait, the status of its answer and
// every level shown come from the gateway (`GET /v1/hosts?detail=1`), whose core decided them; the verdict on each
// access log is the module's `audit`. This file holds the gateway client (is there a gateway, the token, polling)
// and folds each answer into lanes shaped like the simulated ones, so one drawing code shows both.
//
// The token is kept in sessionStorage only, sent only to this page's origin (relative URLs, same-origin
// credentials, redirects refused) and never written anywhere else.
//
// No module import here: the functions that need the module's answers (`audit`, `pushesBack`) are handed them, so
// this file also runs in Node for its tests.

import { lowerBound } from './sorted.js';

export const POLL_MS = 1500; // one request every 1.5 s at most: an open page asks fewer than once a second
export const TOLERANCE_MS = 50; // the audit's tolerance for a live log (network and timer jitter)
const TOKEN_KEY = 'hostpace-gateway-token';

/** The token in what was entered: trimmed, and without `Bearer ` when pasted as a header's value. */
function bareToken(entered) {
  return String(entered).trim().replace(/^Bearer\s+/i, '');
}
const OFFSET_SAMPLES = 20; // answers whose round trips estimate the gateway's clock
const LOG_KEEP = 10_000; // departures kept per lane (the oldest 2,000 go when it is full)
const LOG_TRIM = 2_000;
const SAMPLES_KEEP = 30_000; // token level samples kept per lane (one per answer; the oldest 5,000 go)
const SAMPLES_TRIM = 5_000;
const PURPOSES = new Set(['request', 'robots']);
// the times still to wait in a host's stats (`nextSlotInMs`, `cooldownRemainingMs`, …), counted down between reports
const TIME_LEFT = /(InMs|RemainingMs)$/;

// ---- the gateway client ----------------------------------------------------------------------------------------
/** Reads the gateway's answers for one token at a fixed period; never two requests in flight, none while the tab
 * is hidden or polling is stopped, none again after the token was refused until it changes. */
export class GatewayClient {
  #token = '';
  #timer = null;
  #inFlight = false;
  #lastStart = -Infinity; // performance.now() when the last poll was sent
  #running = false;
  #refused = false;
  #clock = []; // [roundTripMs, offsetMs] of recent answers
  #waiters = [];

  /** `onAnswer(body)` gets each good answer of `/v1/hosts?detail=1`; `onChange()` is told when the status changes. */
  constructor({ periodMs = POLL_MS, onAnswer, onChange }) {
    this.periodMs = periodMs;
    this.onAnswer = onAnswer;
    this.onChange = onChange;
    this.counts = { polls: 0, requests: 0, errors: 0, lastError: '' };
    this.gateway = null; // what /healthz said: { ok, version, problems }, or null (no gateway here)
    this.status = ''; // the connection in one sentence, as the page shows it
    try {
      this.#token = sessionStorage.getItem(TOKEN_KEY) ?? '';
    } catch {
      this.#token = '';
    }
    document.addEventListener('visibilitychange', () => this.#schedule());
  }

  /** Asks `/healthz` once whether a gateway serves this page: JSON with `ok` and a `version` string. */
  async probe() {
    this.counts.requests += 1;
    try {
      const res = await fetch('/healthz', { credentials: 'same-origin', cache: 'no-store', redirect: 'error', headers: { accept: 'application/json' } });
      const body = await res.json();
      if (body && typeof body === 'object' && 'ok' in body && typeof body.version === 'string') {
        const problems = Array.isArray(body.problems) ? body.problems.map(String) : [];
        this.gateway = { ok: body.ok, version: body.version, problems };
      }
    } catch {
      this.gateway = null; // a static server: 404, HTML or nothing
    }
    return this.gateway;
  }

  /** Whether `token` is the one in use. */
  uses(token) { return bareToken(token) === this.#token; }

  /** Whether a token has been entered. */
  get hasToken() { return this.#token !== ''; }

  /** Whether the gateway refused the token in use (401): entering it again tries it again. */
  get refused() { return this.#refused; }

  /** Uses `token` from now on (kept in sessionStorage; empty forgets it). False when it cannot be a bearer token. */
  setToken(token) {
    const t = bareToken(token);
    if (t !== '' && !/^[\x21-\x7e]+$/.test(t)) {
      this.#say('A token is printable ASCII without spaces; this one was not used.');
      return false;
    }
    this.#token = t;
    try {
      if (t) sessionStorage.setItem(TOKEN_KEY, t);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      // storage refused (private mode): the token lives in this page only
    }
    this.#refused = false;
    this.#clock = [];
    this.counts.lastError = '';
    this.#say(t ? 'Token set; asking the gateway…' : 'Enter the gateway token to see the hosts it has used.');
    this.#schedule();
    return true;
  }

  /** Starts polling (at once if the period since the last poll has passed). */
  start() {
    this.#running = true;
    if (!this.hasToken) this.#say('Enter the gateway token to see the hosts it has used.');
    this.#schedule();
  }

  /** Stops polling; an answer on its way is still read. */
  stop() {
    this.#running = false;
    this.#schedule();
  }

  /** Whether polls are being made: started, a token not refused, the tab visible. */
  get polling() {
    return this.#running && this.hasToken && !this.#refused && document.visibilityState !== 'hidden';
  }

  /** Whether a poll is on its way. */
  get inFlight() { return this.#inFlight; }

  /** The gateway's clock minus this page's (`Date.now()`), from the answer with the shortest round trip. */
  get offsetMs() {
    let best = null;
    for (const s of this.#clock) if (!best || s[0] < best[0]) best = s;
    return best ? best[1] : 0;
  }

  /** Resolves once the next poll has been answered (or failed); it makes no extra request. */
  nextPoll() {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Arms the timer for the next poll: `periodMs` after the last one was sent, and only while polling. */
  #schedule() {
    clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.polling || this.#inFlight) return;
    const delay = Math.max(0, this.#lastStart + this.periodMs - performance.now());
    this.#timer = setTimeout(() => this.#poll(), delay);
  }

  /** One poll of `/v1/hosts?detail=1` with the token. */
  async #poll() {
    this.#timer = null;
    if (this.#inFlight || !this.polling) return;
    this.#inFlight = true;
    const token = this.#token;
    this.#lastStart = performance.now();
    this.counts.requests += 1;
    const sentMs = Date.now();
    let res = null;
    let body = null;
    try {
      res = await fetch('/v1/hosts?detail=1', {
        credentials: 'same-origin', cache: 'no-store', redirect: 'error',
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      });
      body = await res.json().catch(() => null);
    } catch {
      res = null; // no answer (network error, or a redirect refused)
    }
    const receivedMs = Date.now();
    try {
      this.counts.polls += 1;
      if (token !== this.#token) return; // the token changed meanwhile: this answer is not its
      if (res?.ok && body && Number.isFinite(body.nowMs) && Array.isArray(body.hosts)) {
        this.#clock.push([receivedMs - sentMs, body.nowMs - (sentMs + receivedMs) / 2]);
        if (this.#clock.length > OFFSET_SAMPLES) this.#clock.shift();
        this.counts.lastError = '';
        const n = body.hosts.length;
        this.#say(n ? `Connected: ${n} host${n === 1 ? '' : 's'} used by this token; asking every ${this.periodMs / 1000} s.`
          : 'Connected: this token has not sent anything through the gateway yet.');
        this.onAnswer(body);
      } else {
        this.#fail(res ? res.status : 0, body, token);
      }
    } finally {
      this.#inFlight = false;
      for (const resolve of this.#waiters.splice(0)) resolve();
      this.#schedule();
    }
  }

  /** A poll that failed: what to tell the person (never the token); a refused token stops polling. */
  #fail(status, body, token) {
    this.counts.errors += 1;
    const err = body && typeof body.error === 'object' && body.error ? body.error : null;
    const said = err ? ` (${scrub(String(err.code ?? ''), token)}${err.message ? `: ${scrub(String(err.message), token)}` : ''})` : '';
    let message;
    if (status === 401 || status === 403) {
      this.#refused = true;
      message = `The gateway refused this token: ${status}${said}. Enter the token it was configured with.`;
    } else if (status >= 200 && status < 300) {
      message = `The gateway's answer (${status}) was not a list of hosts; trying again every ${this.periodMs / 1000} s.`;
    } else if (status === 0) {
      message = `No answer from the gateway; trying again every ${this.periodMs / 1000} s.`;
    } else {
      message = `The gateway answered ${status}${said}; trying again every ${this.periodMs / 1000} s.`;
    }
    this.counts.lastError = message;
    this.#say(message);
  }

  /** Sets the status sentence and tells the page. */
  #say(text) {
    this.status = text;
    this.onChange?.();
  }
}

/** `text` with every occurrence of `token` blanked out (an error message never shows it). */
function scrub(text, token) {
  return token ? text.split(token).join('•••') : text;
}

// ---- lanes -----------------------------------------------------------------------------------------------------
/** A live lane for `host`: the fields the simulated lanes have (so the same code draws it), filled by `mergeHost`. */
export function liveLane(host) {
  return {
    kind: 'live', host,
    times: [], layers: [], waits: [], statuses: [], purposes: [], // the access log, oldest first
    dropped: 0, // departures older than the kept log
    refused: [], refusedCount: 0, // the gateway answers a disallowed URL itself: nothing is refused on a lane
    cooldowns: [], serverQuota: [], // [startMs, endMs] spans, from when the page first saw them
    answers: [], // the answers that pushed back, marked at their departure: { atMs, status, text }
    violations: [], auditDirty: true, auditError: '',
    sampleT: [], sampleTokens: [], sampleDebt: [], capacity: 1, // the token level at each answer
    queued: 0, nextTryMs: Infinity, waitLayer: null, // the page sends nothing, so nothing waits on it
    summary: '', report: null, reportAtMs: NaN, // the gateway's latest report, and its instant
    els: null,
  };
}

/** Folds one host of a `/v1/hosts?detail=1` answer given at `nowMs` (the gateway's clock) into `lane`;
 * `pushesBack(status, purpose)` is the module's, and says which answers are marked. */
export function mergeHost(lane, entry, nowMs, pushesBack) {
  lane.summary = typeof entry.summary === 'string' ? entry.summary : '';
  const r = entry.report;
  if (!r || typeof r !== 'object' || !r.stats || !r.policy) return;
  const keyBefore = lane.report ? auditKey(lane) : '';
  lane.report = r;
  lane.reportAtMs = nowMs;
  let changed = mergeDepartures(lane, Array.isArray(r.departures) ? r.departures : [], pushesBack);
  const s = r.stats;
  changed = learnSpan(lane.cooldowns, nowMs, s.cooldownRemainingMs) || changed;
  changed = learnSpan(lane.serverQuota, nowMs, s.serverQuotaRemainingMs) || changed;
  if (Number.isFinite(s.tokens) && Number.isFinite(s.tokenDebt)) {
    if (lane.sampleT.length >= SAMPLES_KEEP) for (const a of [lane.sampleT, lane.sampleTokens, lane.sampleDebt]) a.splice(0, SAMPLES_TRIM);
    lane.sampleT.push(nowMs);
    lane.sampleTokens.push(s.tokens);
    lane.sampleDebt.push(s.tokenDebt);
    lane.capacity = s.capacity > 0 ? s.capacity : 1;
  }
  if (changed || auditKey(lane) !== keyBefore) lane.auditDirty = true;
}

/** Adds the departures not seen yet (the same instant counted as often as the gateway lists it) and the statuses
 * that became known, marking the answers that pushed back. True when anything changed. */
function mergeDepartures(lane, incoming, pushesBack) {
  let changed = false;
  for (let k = 0; k < incoming.length;) {
    const at = incoming[k]?.atMs;
    let n = 1;
    while (k + n < incoming.length && incoming[k + n]?.atMs === at) n++;
    if (Number.isFinite(at) && !(lane.dropped > 0 && at < lane.times[0])) {
      const i = lowerBound(lane.times, at);
      let m = 0;
      while (i + m < lane.times.length && lane.times[i + m] === at) m++;
      for (let j = 0; j < n; j++) {
        const d = incoming[k + j];
        const status = Number.isInteger(d.status) ? d.status : null;
        if (j < m) {
          if (status !== null && lane.statuses[i + j] !== status) {
            lane.statuses[i + j] = status;
            if (pushesBack(status, lane.purposes[i + j])) mark(lane, at, status, lane.purposes[i + j]);
            changed = true;
          }
          continue;
        }
        const purpose = PURPOSES.has(d.purpose) ? d.purpose : 'request';
        insertAt(lane, i + j, at, typeof d.layer === 'string' ? d.layer : 'none',
          Number.isFinite(d.waitMs) ? Math.max(0, d.waitMs) : 0, status, purpose);
        if (pushesBack(status, purpose)) mark(lane, at, status, purpose);
        changed = true;
      }
    }
    k += n;
  }
  if (lane.times.length > LOG_KEEP) {
    // a suffix of a polite log is polite (audit starts it with a full bucket)
    for (const a of [lane.times, lane.layers, lane.waits, lane.statuses, lane.purposes]) a.splice(0, LOG_TRIM);
    lane.dropped += LOG_TRIM;
    lane.answers = lane.answers.filter((a) => a.atMs >= lane.times[0]);
  }
  return changed;
}

/** Inserts one departure at index `i` of the lane's log (at the end, nearly always). */
function insertAt(lane, i, at, layer, waitMs, status, purpose) {
  if (i === lane.times.length) {
    lane.times.push(at);
    lane.layers.push(layer);
    lane.waits.push(waitMs);
    lane.statuses.push(status);
    lane.purposes.push(purpose);
  } else {
    lane.times.splice(i, 0, at);
    lane.layers.splice(i, 0, layer);
    lane.waits.splice(i, 0, waitMs);
    lane.statuses.splice(i, 0, status);
    lane.purposes.splice(i, 0, purpose);
  }
}

/** Marks an answer that pushed back on the lane's timeline, at the departure it answered, in time order. */
function mark(lane, atMs, status, purpose) {
  const a = { atMs, status, text: purpose === 'robots' ? `${status} (robots.txt)` : String(status) };
  let i = lane.answers.length;
  while (i > 0 && lane.answers[i - 1].atMs > atMs) i--;
  lane.answers.splice(i, 0, a);
}

/** A cooldown or server block the gateway reports `remainingMs` of at `nowMs`: a new span from now, or the one
 * under way with its (possibly moved) end. True when a span started or its end moved. */
function learnSpan(spans, nowMs, remainingMs) {
  if (!(remainingMs > 0)) return false;
  const end = nowMs + remainingMs;
  const last = spans.at(-1);
  if (last && last[1] >= nowMs) {
    const moved = Math.abs(last[1] - end) > 2; // the gateway rounds what is left up to whole milliseconds
    if (moved) last[1] = end;
    return moved;
  }
  spans.push([nowMs, end]);
  return true;
}

// ---- levels and the audit --------------------------------------------------------------------------------------
/** What each layer of the lane's host holds at `nowMs` (the gateway's clock): the host's `stats` in the gateway's
 * latest report as it gave them, the times still to wait counted down to the instant the gateway named, with the
 * policy's quota window and permits. Null before a report. */
export function liveLevels(lane, nowMs) {
  const r = lane.report;
  if (!r) return null;
  const at = lane.reportAtMs;
  const levels = { ...r.stats };
  for (const [k, ms] of Object.entries(levels)) {
    if (TIME_LEFT.test(k)) levels[k] = Number.isFinite(ms) && ms > 0 ? Math.max(0, Math.ceil(at + ms - nowMs)) : 0;
  }
  return { ...levels, quotaWindowSec: r.policy.quota?.windowSec, maxConcurrency: r.policy.maxConcurrency ?? 0, asOfMs: at };
}

/** A lane's cooldowns (simulated or live: `[startMs, endMs]` spans) as `audit` takes them, `{ startMs, endMs }`. */
export function auditCooldowns(lane) {
  return lane.cooldowns.map(([startMs, endMs]) => ({ startMs, endMs }));
}

/** The configuration the lane's access log is judged against: the gateway's policy as it states it, with the
 * interval floor the host's stats say is in force (the policy's floor raised by the host's Crawl-delay). */
export function auditConfig(lane) {
  const { policy, stats } = lane.report;
  return Number.isFinite(stats.intervalMs) ? { ...policy, minIntervalSec: stats.intervalMs / 1000 } : { ...policy };
}

/** What the audit depends on besides the log, as a string (a change re-audits the lane). */
function auditKey(lane) {
  return JSON.stringify(auditConfig(lane));
}

/** Judges the lane's access log with the module's `audit`, with the live tolerance; a config the module refuses is
 * reported on the lane. */
export function auditLiveLane(lane, audit) {
  lane.auditDirty = false;
  if (!lane.report || typeof audit !== 'function') return;
  try {
    lane.violations = audit(auditConfig(lane), lane.times, auditCooldowns(lane), TOLERANCE_MS);
    lane.auditError = '';
  } catch (e) {
    lane.violations = [];
    lane.auditError = e.message;
  }
}

/** The lane as `window.playground.lanes` shows it in live mode. */
export function liveLaneState(lane, nowMs) {
  return {
    host: lane.host, kind: lane.kind,
    departures: lane.times.map((atMs, i) => ({
      atMs, waitMs: lane.waits[i], layer: lane.layers[i], status: lane.statuses[i], purpose: lane.purposes[i],
    })),
    violations: lane.violations.map((v) => ({ ...v })),
    auditError: lane.auditError,
    toleranceMs: TOLERANCE_MS,
    auditConfig: lane.report ? auditConfig(lane) : null,
    cooldowns: lane.cooldowns.map((s) => [...s]),
    serverQuota: lane.serverQuota.map((s) => [...s]),
    answers: lane.answers.map((a) => ({ ...a })),
    levels: liveLevels(lane, nowMs),
    summary: lane.summary,
    policy: lane.report ? structuredClone(lane.report.policy) : null,
    robots: lane.report?.robots ? structuredClone(lane.report.robots) : null,
    reportAtMs: lane.reportAtMs,
    dropped: lane.dropped,
  };
}
