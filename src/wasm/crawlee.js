// hostpace for Crawlee 3.x crawlers (`hostpace/crawlee`): `withHostpace(crawler, limiter)` makes an `HttpCrawler`
// (or a crawler built on it: Cheerio, JSDOM, LinkeDOM) or a `BasicCrawler` wait for each host's turn at a
// `Limiter`, learn from every response (429/503 + Retry-After, RateLimit headers), and obey robots.txt. Every wait,
// cooldown, robots.txt verdict and retry verdict comes from the limiter; this file only connects Crawlee to it.
//
// Plain JavaScript with no import of Crawlee: the package gains no dependency. It relies on these parts of a
// Crawlee 3 crawler (checked against @crawlee/basic and @crawlee/http 3.18.1):
//
//   preNavigationHooks / postNavigationHooks   arrays of `(crawlingContext, gotOptions)` hooks (HttpCrawler)
//   delayRequest(request, source)              asked before each request is handled; `true` means "not now":
//                                              Crawlee ends the task and the request stays locked in its queue
//                                              until `source.reclaimRequest` gives it back (how Crawlee's own
//                                              `sameDomainDelaySecs` gives a concurrency slot back)
//   _cleanupContext(crawlingContext)           called after every handled request, success or failure
//   _handleNavigation(crawlingContext)         HttpCrawler's navigation: pre-navigation hooks, got, post-navigation
//   gotOptions.hooks.beforeRequest             got's last step before a request is written (HttpCrawler)
//   autoscaledPool.notify()                    start a task now rather than at the pool's next tick (0.5 s)
//
// Where the wait happens. A Crawlee task holds one of `maxConcurrency` slots from the moment it takes a request
// until the request is handled, so a request waiting for its host's turn inside a hook holds a slot. To keep a
// slow or throttled host from filling the slots, a request is only let into a task when its host's next turn is
// at most `holdMs` away and fewer than `perHost` requests of that host are between that point and their response;
// any other request is set aside (its task ends at once, its slot is free) and handed back to the front of the
// queue `holdMs` before its host's turn, or as soon as a response of its host comes in. So a host costs at most
// `perHost` slots waiting, each for about `holdMs` at most (plus, on first contact, the fetch of its robots.txt),
// and the other slots keep crawling the other hosts.
//
// Why until the response, not until the departure: with one request of a host at a time (the default) nothing of
// that host is reserved before its last response is in, so a 429 is seen before the next turn is even asked for.
// With more, a departure reserved before the host began to cool down is held by the limiter's `depart` until the
// cooldown is over (and `send` does not send one whose host is cooling down when its turn comes).
//
// The departure itself is `limiter.schedule`: robots.txt first (fetched through the host's pacing, once a day),
// then the reserved turn, confirmed right before sending, then the response observed and the permit given back.

import { headerPairs } from './lifecycle.js';

/** Pacers by crawler: `sendPaced` finds its crawler's here. */
const pacers = new WeakMap();

/**
 * How long a request may stay set aside before it is handed back anyway: well under Crawlee's request lock (at
 * least 60 s), so that the queue never hands a set-aside request to a second task.
 */
const MAX_ASIDE_MS = 30_000;

/**
 * How long a request let into a task (or handed back to the queue) may take to reach its send before it stops
 * counting against its host: one that Crawlee dropped on its own in between, or that a busy crawler has not
 * picked up yet.
 */
const ADMIT_TIMEOUT_MS = 10_000;

/** The names of the errors this file rejects with (robots.txt refusals come from the limiter). */
const OURS = new Set(['RobotsDisallowed', 'RobotsUnavailable', 'HostThrottled']);

/** What a send that did not go returns to `schedule` (not a response: nothing is observed). */
const NOT_SENT = Symbol('not sent');

function errorNamed(name, message, fields) {
  return Object.assign(new Error(message), { name }, fields);
}

/** A promise with its `resolve` and `reject` outside. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

/** The status of what a send returned: a fetch `Response` (`status`) or a got response (`statusCode`). */
function statusOf(result) {
  if (result === null || typeof result !== 'object') return undefined;
  if (typeof result.status === 'number') return result.status;
  if (typeof result.statusCode === 'number') return result.statusCode;
  return undefined;
}

/** The key of a request in the crawler's queue. */
const idOf = (request) => request.id ?? request.uniqueKey;

class Pacer {
  constructor(crawler, limiter, { holdMs = 1000, perHost = 1 } = {}) {
    if (typeof holdMs !== 'number' || !(holdMs >= 0)) throw new TypeError('invalid holdMs: expected a number ≥ 0');
    if (!(Number.isInteger(perHost) && perHost >= 1)) {
      throw new TypeError('invalid perHost: expected a whole number ≥ 1');
    }
    this.crawler = crawler;
    this.limiter = limiter;
    this.holdMs = holdMs;
    this.perHost = perHost;
    /**
     * Requests let into a task, until their response (or failure), by request id: `{ host, request, sinceMs,
     * context, returning }`; `context` once the request reached its send, `returning` while it is handed back.
     */
    this.active = new Map();
    /** Requests set aside, by host: `[{ request, source, timer }]`, oldest first. */
    this.aside = new Map();
    /** Sends waiting for their response, by crawling context (HttpCrawler's hooks). */
    this.flights = new WeakMap();
  }

  /** How many requests of `host` are active now (dropping those that did not reach their send in time). */
  activeFor(host) {
    const now = performance.now();
    let n = 0;
    for (const [id, entry] of this.active) {
      if (!entry.context && now - entry.sinceMs > ADMIT_TIMEOUT_MS) this.active.delete(id);
      else if (entry.host === host) n++;
    }
    return n;
  }

  /**
   * Crawlee's question before a request is handled: `true` sets it aside (its task ends, its slot is free),
   * `false` lets it wait for its host's turn in this task.
   */
  delay(request, source) {
    let next;
    try {
      next = this.limiter.peek(request.url); // no side effect: nothing is reserved here
    } catch (_) {
      return false; // a URL the limiter refuses: the send rejects with the reason
    }
    const { host } = next;
    const id = idOf(request);
    if (this.active.get(id)?.returning) this.active.delete(id); // the room kept for it while handed back
    if (this.activeFor(host) >= this.perHost) {
      this.setAside(host, request, source, MAX_ASIDE_MS); // handed back when a response of its host comes in
      return true;
    }
    // (when every concurrency permit of the host is held, `waitMs` is when the first lease ends; the request is
    // handed back sooner, when a response gives a permit back)
    if (next.waitMs > this.holdMs) {
      this.setAside(host, request, source, next.waitMs - this.holdMs);
      return true;
    }
    this.active.set(id, { host, request, sinceMs: performance.now(), context: undefined, returning: false });
    return false;
  }

  /** Keep `request` out of the crawler's tasks for `ms` at most (or until its host has room). */
  setAside(host, request, source, ms) {
    const entry = { request, source, timer: undefined };
    entry.timer = setTimeout(() => this.handBack(host, entry), Math.min(ms, MAX_ASIDE_MS));
    entry.timer.unref?.(); // a running crawler keeps the process alive; a stopped one leaves nothing to wait for
    let list = this.aside.get(host);
    if (!list) this.aside.set(host, (list = []));
    list.push(entry);
  }

  /** Give a set-aside request back to the front of its queue, and start a task for it now. */
  handBack(host, entry) {
    const list = this.aside.get(host);
    const at = list ? list.indexOf(entry) : -1;
    if (at < 0) return; // already handed back
    list.splice(at, 1);
    if (list.length === 0) this.aside.delete(host);
    clearTimeout(entry.timer);
    // its room is kept until it is back in `delay`, so that one response hands back one request
    const { request } = entry;
    this.active.set(idOf(request), { host, request, sinceMs: performance.now(), context: undefined, returning: true });
    Promise.resolve(entry.source.reclaimRequest(request, { forefront: true }))
      .then(() => this.crawler.autoscaledPool?.notify())
      .catch((error) => this.crawler.log?.warning?.(`hostpace: could not hand ${request.url} back: ${error}`));
  }

  /** A request let into a task is done with its host (answered, refused, failed): hand the next one back. */
  leave(entry) {
    const id = idOf(entry.request);
    if (this.active.get(id) === entry) this.active.delete(id);
    const first = this.aside.get(entry.host)?.[0];
    if (first && this.activeFor(entry.host) < this.perHost) this.handBack(entry.host, first);
  }

  /**
   * Send `task` at `url`'s turn for the request of `context`: robots.txt, the host's turn, the response
   * observed. A refusal by robots.txt rejects with the request marked `noRetry`; a 429/503 rejects so that
   * Crawlee retries the request after the host's cooldown (or marked `noRetry` once the limiter gives up).
   */
  async send(context, task, url = context.request.url) {
    const { request } = context;
    // the entry `delay` made for this request in this task, when `url` is the request's own
    let entry = url === request.url ? this.active.get(idOf(request)) : undefined;
    if (entry && (entry.context !== undefined || entry.request !== request)) entry = undefined;
    if (entry) entry.context = context;
    let seen = NOT_SENT;
    try {
      // the task runs at the departure; what it returns goes to `observe` when it is a response
      const observed = await this.limiter.schedule(url, async () => {
        // A 429 (or a server quota at zero) observed after this turn was reserved does not hold the turn back:
        // such a request is not sent, and goes again after the pause.
        const { layer } = this.limiter.peek(url);
        if (layer === 'cooldown' || layer === 'serverQuota') return NOT_SENT;
        seen = await task();
        const status = statusOf(seen);
        return status === undefined ? seen : { status, headers: headerPairs(seen.headers) };
      });
      if (observed === NOT_SENT) {
        const message = `${url} not sent: its host asked for a pause after its turn was reserved (hostpace)`;
        throw errorNamed('HostThrottled', message, { url });
      }
      // the host pushed back (the core's verdict: a 429 or 503 is retried after its cooldown)
      const pushedBack = observed !== seen && this.limiter.retryVerdict(observed.status, 1) !== 'done';
      if (pushedBack) this.throttled(request, url, observed.status);
      return seen;
    } catch (error) {
      if (error?.name === 'RobotsDisallowed' || error?.name === 'RobotsUnavailable') request.noRetry = true;
      throw error;
    } finally {
      // answered, refused or failed: the next request of the host may come in (its permit, if any, is back)
      if (entry) this.leave(entry);
    }
  }

  /** A 429/503 from `url`: retry after the cooldown, or give up, as the limiter's retry verdict says. */
  throttled(request, url, status) {
    const attempt = (request.retryCount ?? 0) + 1;
    const verdict = this.limiter.retryVerdict(status, attempt);
    if (verdict !== 'retry') request.noRetry = true;
    const then = verdict === 'retry' ? 'retried after the cooldown' : 'given up';
    throw errorNamed('HostThrottled', `${url} answered ${status}: ${then} (hostpace)`, { url, status });
  }

  // HttpCrawler's hooks: the pre-navigation hook returns at the departure, the post-navigation hook hands the
  // response over and waits for it to be observed.

  async preNavigation(context, gotOptions) {
    const answer = deferred();
    answer.promise.catch(() => {}); // rejected by `cleanup` when no response came; `schedule` reads it if it ran
    const departure = deferred();
    const flight = { answer, done: undefined };
    /** Send at the host's turn: resolves at the departure, rejects when the request does not go. */
    const go = () => {
      flight.done ??= this.send(context, () => {
        departure.resolve();
        return answer.promise;
      });
      return Promise.race([departure.promise, flight.done]); // `done` settles first when the request does not go
    };
    this.flights.set(context, flight);
    const hooks = gotOptions && typeof gotOptions === 'object' ? (gotOptions.hooks ??= {}) : undefined;
    if (!hooks) {
      await go();
      return;
    }
    // got-scraping prepares each request in its own beforeRequest hooks (browser-like headers: about 250 ms on a
    // process's first request). The turn is taken in a beforeRequest hook after them, so that nothing lies between
    // the departure and the request being written. A refusal there reaches Crawlee wrapped by got
    // (`_handleNavigation` unwraps it); the wait counts against Crawlee's `navigationTimeoutSecs`.
    hooks.beforeRequest = [...(hooks.beforeRequest ?? []), async () => void (await go())];
  }

  async postNavigation(context) {
    const flight = this.flights.get(context);
    if (!flight) return;
    this.flights.delete(context);
    // A request is written some time after its departure is confirmed: at once on an open connection, but a new
    // one opens first, and a busy event loop (Crawlee's own periodic work, another task) delays both. got times
    // the write (`timings.upload`, wall clock); later departures of the host keep their spacing from it.
    const upload = context.response?.timings?.upload;
    if (Number.isFinite(upload)) {
      const atMs = performance.timeOrigin + performance.now() - Math.max(0, Date.now() - upload);
      this.limiter.sent(context.request.url, atMs);
    }
    flight.answer.resolve(context.response);
    await flight.done;
  }

  /** After every handled request: a send left without its response (the navigation failed) reports a failure. */
  cleanup(context) {
    const flight = this.flights.get(context);
    if (flight) {
      this.flights.delete(context);
      flight.done?.catch(() => {}); // the request already failed with Crawlee's own error
      flight.answer.reject(new Error('the navigation failed before a response'));
    }
    // a request whose task never reached its send (`skipNavigation`, a hook before ours failed)
    const request = context?.request;
    const entry = request && this.active.get(idOf(request));
    if (entry && entry.context === undefined && !entry.returning && entry.request === request) this.leave(entry);
  }
}

/**
 * Pace `crawler` (a Crawlee 3 `BasicCrawler`, `HttpCrawler` or a crawler built on it) by `limiter`; returns the
 * crawler. See crawlee.d.ts.
 */
export function withHostpace(crawler, limiter, options) {
  if (!crawler || typeof crawler.delayRequest !== 'function' || typeof crawler._cleanupContext !== 'function') {
    throw new TypeError('invalid crawler: expected a Crawlee 3 crawler (BasicCrawler, HttpCrawler, …)');
  }
  if (!limiter || typeof limiter.peek !== 'function' || typeof limiter.schedule !== 'function') {
    throw new TypeError("invalid limiter: expected hostpace's Limiter");
  }
  if (pacers.has(crawler)) throw new Error('this crawler is already paced by hostpace');
  const pacer = new Pacer(crawler, limiter, options);
  pacers.set(crawler, pacer);

  // Crawlee's own per-domain delay (sameDomainDelaySecs) still applies first.
  const delayRequest = crawler.delayRequest;
  crawler.delayRequest = function (request, source) {
    return delayRequest.call(this, request, source) || pacer.delay(request, source);
  };
  const cleanupContext = crawler._cleanupContext;
  crawler._cleanupContext = async function (context) {
    pacer.cleanup(context);
    return cleanupContext.call(this, context);
  };
  if (Array.isArray(crawler.preNavigationHooks) && Array.isArray(crawler.postNavigationHooks)) {
    // a refusal awaited inside got's beforeRequest hook comes back as got's RequestError: Crawlee sees it as
    // itself (RobotsDisallowed, RobotsUnavailable, HostThrottled)
    const handleNavigation = crawler._handleNavigation;
    if (typeof handleNavigation === 'function') {
      crawler._handleNavigation = async function (context) {
        try {
          return await handleNavigation.call(this, context);
        } catch (error) {
          const cause = error?.name === 'RequestError' ? error.cause : undefined;
          throw OURS.has(cause?.name) ? cause : error;
        }
      };
    }
    // last of the pre-navigation hooks, so that nothing runs between the departure and the send; first of the
    // post-navigation hooks, before Crawlee's own check of the content type, so that every response is observed
    const pre = (context, gotOptions) => pacer.preNavigation(context, gotOptions);
    crawler.preNavigationHooks = [...crawler.preNavigationHooks, pre];
    crawler.postNavigationHooks = [(context) => pacer.postNavigation(context), ...crawler.postNavigationHooks];
  }
  return crawler;
}

/**
 * For a `BasicCrawler`'s `requestHandler` (which sends its own requests): run `task` at the turn of `url`
 * (default: the context's request) by the limiter of the crawler `withHostpace` paced. See crawlee.d.ts.
 */
export function sendPaced(context, task, url) {
  const pacer = pacers.get(context?.crawler);
  if (!pacer) return Promise.reject(new Error('sendPaced: the crawler of this context is not paced (withHostpace)'));
  if (typeof task !== 'function') return Promise.reject(new TypeError('invalid task: expected a function'));
  return pacer.send(context, task, url ?? context.request.url);
}
