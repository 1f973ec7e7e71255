// Test helpers: a real HTTP origin on 127.0.0.1 that keeps its own access log, and small checks that read such a
// log. Nothing here computes a wait: the checks only read the times the origin recorded (the target's view).
//
// Hosts: each `Origin` listens on its own port of 127.0.0.1, and a hostpace host key keeps a non-default port
// ("127.0.0.1:41234"), so two origins are two independent hosts to the limiter. (`localhost` vs `127.0.0.1`
// would also be two keys, but only two; distinct ports give as many hosts as a test needs, all on 127.0.0.1.)
//
// Scripts: `routes` maps a path (without query) to a script: a reply, an array of replies played in order (the
// last one repeats), or a function `(ctx) => reply`. A reply is `{ status, headers, body, delayMs }`; `headers`
// may be a function `(ctx) => headers`. `ctx` is `{ n, nowMs, dateMs, req }`: the 1-based count of requests to
// that path so far, the arrival time, and the instant the response's `Date` header states (whole seconds).

import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Slack for timing checks read from an origin's log (ms). An arrival is stamped after the request crossed the
 * loopback and the event loop, so two arrivals can be a little closer than their departures were; on a heavily
 * loaded machine raise it with HOSTPACE_TEST_TOLERANCE_MS.
 */
export const TOL = Number(process.env.HOSTPACE_TEST_TOLERANCE_MS ?? 20);

/** Epoch milliseconds, the way the package's clock adapter reads them (same process, same clock). */
export const clockMs = () => performance.timeOrigin + performance.now();

/** A free TCP port on 127.0.0.1: the system picks it for a server that is closed again at once. */
export async function freePort() {
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An HTTP-date (IMF-fixdate) for epoch milliseconds (1 s resolution: milliseconds are dropped). */
export const httpDate = (ms) => new Date(ms).toUTCString();

/** What every origin shows of itself: its host key, its URLs and the arrival times in its access log (`log`). */
class OriginView {
  /** The host key hostpace gives this origin (`127.0.0.1:PORT`). */
  get host() {
    return `127.0.0.1:${this.port}`;
  }

  /** An absolute URL on this origin. */
  url(path = '/') {
    return `http://${this.host}${path}`;
  }

  /** Arrival times (epoch ms) of requests, all or to one path. */
  arrivals(path) {
    return this.log.filter((e) => path === undefined || e.path === path).map((e) => e.t);
  }
}

export class Origin extends OriginView {
  /**
   * Start an origin on 127.0.0.1 (port 0: the system picks one).
   * @param {Record<string, any>} routes per-path scripts (see above); other paths answer 200 with a small body
   * @param {{ sendDate?: boolean }} options `sendDate: false` sends no `Date` header at all
   */
  static async start(routes = {}, { sendDate = true } = {}) {
    const origin = new Origin(routes, sendDate);
    await new Promise((resolve, reject) => {
      origin.server.once('error', reject);
      origin.server.listen(0, '127.0.0.1', resolve);
    });
    origin.port = origin.server.address().port;
    return origin;
  }

  constructor(routes, sendDate) {
    super();
    this.routes = routes;
    this.sendDate = sendDate;
    /** The access log: `{ t, method, path, url, host, headers, status }` in arrival order (`t`: epoch ms). */
    this.log = [];
    this.counts = new Map();
    this.server = http.createServer((req, res) => this.#handle(req, res));
    /** Called with each log entry once its status is known (an origin in its own process reports it). */
    this.onLog = undefined;
  }

  /**
   * Open `connections` keep-alive connections from this process's `fetch` (and load undici, whose first use
   * blocks the event loop for tens of milliseconds), then clear the log. Pacing tests call this first so that
   * they measure the limiter, not a cold start (see the stall test in limiter.test.mjs for that).
   */
  async warm(connections = 1) {
    await Promise.all(
      Array.from({ length: connections }, () => fetch(this.url('/__warm')).then((r) => r.arrayBuffer())),
    );
    this.log.length = 0;
    this.counts.clear();
  }

  async #handle(req, res) {
    const t = clockMs();
    const path = req.url.split('?')[0];
    const n = (this.counts.get(path) ?? 0) + 1;
    this.counts.set(path, n);
    const entry = { t, method: req.method, path, url: req.url, host: req.headers.host, headers: { ...req.headers } };
    this.log.push(entry);
    const dateMs = Math.floor(t / 1000) * 1000;
    const ctx = { n, nowMs: t, dateMs, req };
    let reply = this.routes[path] ?? this.routes['*'] ?? { status: 200, body: `page ${path}` };
    if (Array.isArray(reply)) reply = reply[Math.min(n, reply.length) - 1];
    if (typeof reply === 'function') reply = reply(ctx);
    const { status = 200, body = '', delayMs = 0 } = reply;
    const headers = typeof reply.headers === 'function' ? reply.headers(ctx) : { ...(reply.headers ?? {}) };
    entry.status = status;
    this.onLog?.(entry);
    if (delayMs > 0) await sleep(delayMs);
    res.sendDate = false;
    if (this.sendDate && !Object.keys(headers).some((k) => k.toLowerCase() === 'date')) {
      headers.Date = httpDate(dateMs);
    }
    res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', ...headers });
    res.end(body);
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The origins a suite starts as it goes, closed together at its end: `start(routes, options)` starts one (as
 * `Origin.start`) and keeps it, `closeAll()` closes every one started.
 */
export function originPool(Kind = Origin) {
  const started = [];
  return {
    start: async (routes, options) => {
      const o = await Kind.start(routes, options);
      started.push(o);
      return o;
    },
    /** Every started origin's log complete so far (for `RemoteOrigin`s). */
    syncAll: () => Promise.all(started.map((o) => o.sync?.())),
    closeAll: () => Promise.all(started.map((o) => o.close())),
  };
}

/**
 * An origin in a process of its own (tests/js/origin-process.mjs), for tests whose crawler runs in the test's
 * process and blocks its event loop at times (Crawlee's own work): an origin sharing that loop would stamp
 * arrivals late, as a real target on another machine does not. Routes are plain data (no functions); the log
 * comes over IPC, complete up to the last `sync()`.
 */
export class RemoteOrigin extends OriginView {
  /** @param {Record<string, any>} routes */
  static async start(routes = {}) {
    const child = fork(new URL('./origin-process.mjs', import.meta.url), [JSON.stringify(routes)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const origin = new RemoteOrigin(child);
    const [ready] = await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(([code]) => Promise.reject(new Error(`the origin process exited (${code})`))),
    ]);
    origin.port = ready.port;
    return origin;
  }

  constructor(child) {
    super();
    this.child = child;
    /** The access log, as `Origin`'s, received from the origin's process. */
    this.log = [];
    this.syncs = [];
    child.on('message', (m) => {
      if (m.entry) this.log.push(m.entry);
      if (m.synced) this.syncs.shift()?.();
    });
    // gone: nothing more will be logged, so every sync waiting is complete (a send to it fails the same way)
    child.on('exit', () => {
      for (const resolve of this.syncs.splice(0)) resolve();
    });
    child.on('error', () => {});
  }

  /** Resolves once every request the origin has logged so far is in `log` (at once when it is closed). */
  sync() {
    if (!this.child.connected) return Promise.resolve();
    return new Promise((resolve) => {
      this.syncs.push(resolve);
      this.child.send('sync');
    });
  }

  async close() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.send('close');
    await exited;
  }
}

/** Start `n` origins (n independent hosts) sharing one route table. */
export async function startOrigins(n, routes = {}, options = {}) {
  return Promise.all(Array.from({ length: n }, () => Origin.start(routes, options)));
}

/** Gaps between consecutive times (ms), after sorting. */
export function gaps(times) {
  const t = [...times].sort((a, b) => a - b);
  return t.slice(1).map((x, i) => x - t[i]);
}

/**
 * Assert that arrivals keep `minGapMs` between neighbours, over every span: the k-th arrival after any arrival
 * comes at least `k * minGapMs - toleranceMs` after it. Returns the smallest gap between neighbours. A late
 * arrival (a busy event loop on the way) shortens the gap after it by its delay but no span beyond that, so the
 * tolerance covers delivery delays while a rate above `1000 / minGapMs` per second still fails within a few
 * arrivals. `what` names the host in the failure message.
 */
export function assertSpacing(assert, times, minGapMs, toleranceMs, what = 'host') {
  const t = [...times].sort((a, b) => a - b);
  const g = gaps(t);
  let worst;
  for (let i = 0; i < t.length; i++) {
    for (let j = i + 1; j < t.length; j++) {
      const short = (j - i) * minGapMs - (t[j] - t[i]);
      if (!worst || short > worst.short) worst = { short, i, j };
    }
  }
  assert.ok(
    !worst || worst.short <= toleranceMs,
    worst &&
      `${what}: arrivals ${worst.i} and ${worst.j} ${(t[worst.j] - t[worst.i]).toFixed(1)} ms apart, expected >= ` +
        `${worst.j - worst.i} × ${minGapMs} - ${toleranceMs} ms (gaps: ${g.map((x) => x.toFixed(1)).join(', ')})`,
  );
  return g.length ? Math.min(...g) : Infinity;
}

/** The largest number of times inside any closed window of `windowMs` (a sliding count over the log). */
export function maxInWindow(times, windowMs) {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i] - t[j] > windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

/** Resolve after `ms`, or reject after `ms` with `message` (for "this must not hang" checks). */
export function within(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message ?? `did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Poll `predicate` every `everyMs` until it holds. Past `withinMs`, reject with `message` and stop polling (a poll
 * left running would keep the test file alive).
 */
export async function until(predicate, { everyMs = 5, withinMs = Infinity, message } = {}) {
  const deadline = performance.now() + withinMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(message ?? `did not settle within ${withinMs} ms`);
    await sleep(everyMs);
  }
}

export { sleep };
