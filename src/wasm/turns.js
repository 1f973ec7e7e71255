// How `Limiter` (limiter.js) and `SharedLimiter` (shared-limiter.js) carry out a request's turns: their side of the
// request lifecycle (lifecycle.js, shared with GatewayLimiter), the core's visit (robots.txt first, held while it
// is fetched, refused by it), the fetch of robots.txt the visit asks for, and redirects followed hop by hop, each
// paced by its host. Every decision comes from the limiter's public methods, which answer at once (`Limiter`) or
// with a promise (`SharedLimiter`, whose decisions go through its store); this file only fetches, waits and
// reports.
import { maxRobotsBytes } from './hostpace.js';
import {
  abortReason,
  callOptions,
  fetchThrough,
  inBrowser,
  scheduleThrough,
  sleep,
  taskArg,
  urlArg,
  withUserAgent,
} from './lifecycle.js';

/** `f(value)`, at once when `value` is not a promise (a `Limiter`'s answer), or once it resolves. */
function then(value, f) {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * A limiter's side of the request lifecycle (lifecycle.js). `visit`, `depart`, `observe` and `observeFailure`
 * are also handed the call's `signal` (a `SharedLimiter` bounds a wait for its store by it; a `Limiter` takes no
 * such argument). A request's turn is the core's visit (`visit`: robots.txt first, held while it is fetched,
 * refused by it), carried out here; a call's `signal` and `onDecision` go to the fetch of robots.txt it may be
 * asked to make.
 */
export class LocalTurns {
  constructor(limiter, { signal, onDecision } = {}) {
    this.owner = limiter;
    this.signal = signal;
    this.onDecision = onDecision;
  }

  acquire(url) {
    // a `Limiter` reserves the departure before this returns
    const turn = this.owner.visit(url, undefined, undefined, { signal: this.signal });
    return then(turn, (t) => (t.turn === 'go' ? t.decision : untilGo(this, url, t)));
  }

  depart(url, decision) {
    return this.owner.depart(url, decision.departsMs, { signal: this.signal });
  }

  async observe(url, decision, response, latencyMs) {
    try {
      return await this.owner.observe(url, response, latencyMs, undefined, { signal: this.signal });
    } finally {
      await this.release(url, decision);
    }
  }

  async observeFailure(url, decision) {
    await this.release(url, decision);
    await this.owner.observeFailure(url, { signal: this.signal });
  }

  release(url, decision) {
    if (decision.permitId !== undefined) return this.owner.release(url, decision.permitId);
  }

  retryVerdict(response, attempt) {
    return this.owner.retryVerdict(response.status, attempt);
  }
}

/**
 * The turns of a fetch of robots.txt: its first departure is the one the visit reserved for it, and a redirect's
 * hop is paced by its host (whose own robots.txt is not asked). Its answer is reported once, by `robotsFetched`
 * (the core learns from it there, pushback included), and never retried here: the core says when the file is due
 * again.
 */
class RobotsTurns extends LocalTurns {
  constructor(limiter, first, onDecision) {
    super(limiter, { onDecision });
    this.first = first;
  }

  acquire(url) {
    const first = this.first;
    this.first = undefined;
    return first ?? this.owner.acquire(url);
  }

  observe(url, decision) {
    return this.release(url, decision);
  }

  retryVerdict() {
    return 'done';
  }
}

// robots.txt before a request: the core's visit says what to do; this only fetches the file when told to, waits
// when told to, and reports what came back.

/** Fetches of robots.txt under way, by limiter and host: callers told to hold wait for them. */
const robotsFetches = new WeakMap();

/** The body of `response`, at most `limit` bytes and one more (so a longer file shows as such), as text. */
async function boundedText(response, limit) {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(bytes.subarray(0, Math.min(size, limit + 1)));
}

/**
 * Fetch `robotsUrl` on the departure the visit's `turn` reserved for it, giving up after the turn's `timeoutMs`,
 * and report what came back as its fetch. Never rejects.
 */
async function fetchRobots(limiter, robotsUrl, turn, onDecision) {
  const deadline = new AbortController();
  // (a timer longer than 2^31 - 1 ms fires at once: a host whose turn is that far off is given up then)
  const ms = Math.min(turn.timeoutMs, 2 ** 31 - 1);
  const timer = setTimeout(() => deadline.abort(new Error('robots.txt took too long')), ms);
  // a report of a fetch no longer under way (given up by the core, or answered by another) changes nothing
  const report = (status, text) => limiter.robotsFetched(robotsUrl, status, text, undefined, undefined, turn.fetch);
  try {
    let response;
    try {
      // at most 5 redirects (RFC 9309 §2.3.1.2), each paced by its host; a 3xx after them means unavailable
      const init = withUserAgent({ signal: deadline.signal }, limiter.userAgent);
      const told = onDecision && ((event) => onDecision({ ...event, purpose: 'robots' }));
      response = await fetchFollowing(new RobotsTurns(limiter, turn.decision, told), robotsUrl, init, 5, told);
      // fetch does not say when it wrote the request (a first connection, a busy event loop delay it): the file's
      // request is taken as sent when its answer came, so the host's first page keeps its interval after it
      await limiter.sent(robotsUrl);
    } catch (_) {
      await report(0); // no answer in time: as a 5xx
      return;
    }
    if (response.status >= 200 && response.status < 300) {
      let text;
      try {
        text = await boundedText(response, maxRobotsBytes());
      } catch (_) {
        await report(0); // the body broke off, or came too slowly
        return;
      }
      await report(response.status, text);
    } else {
      await report(response.status);
      await response.body?.cancel().catch(() => {});
    }
  } catch (_) {
    // the core refused the report (it then counts the file as unreachable): callers ask it again
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Carry out the visit's `turn` to `url` until it says go: fetch robots.txt when told to, or wait for the fetch
 * under way (another call's in this realm, or `waitMs`); each time, visit again. The decision to send under; a
 * refusal (`RobotsDisallowed`, `RobotsUnavailable`, `HostGivenUp`) is thrown by `visit`.
 */
async function untilGo(turns, url, turn) {
  const { owner: limiter, signal, onDecision } = turns;
  for (;;) {
    if (turn.turn === 'go') return turn.decision;
    const robotsUrl = new URL('/robots.txt', url);
    let fetches = robotsFetches.get(limiter);
    if (!fetches) robotsFetches.set(limiter, (fetches = new Map()));
    if (turn.turn === 'fetchRobots') {
      // the fetch goes on if this caller's signal aborts: other calls wait for it too
      const fetching = fetchRobots(limiter, robotsUrl.href, turn, onDecision).finally(() => {
        if (fetches.get(robotsUrl.host) === fetching) fetches.delete(robotsUrl.host);
      });
      fetches.set(robotsUrl.host, fetching);
      await unlessAborted(fetching, signal);
    } else if (turn.turn === 'hold') {
      await unlessAborted(fetches.get(robotsUrl.host) ?? sleep(turn.waitMs), signal);
    } else {
      throw new Error(`${url}: the visit answered ${turn.turn}, which this call did not ask for`);
    }
    if (signal && signal.aborted) throw abortReason(signal);
    turn = await limiter.visit(url, undefined, undefined, { signal });
  }
}

/** `promise`, or a rejection with `signal`'s reason as soon as it aborts. */
function unlessAborted(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    const done = () => signal.removeEventListener('abort', onAbort);
    // handled whatever happens first, so that a rejection of `promise` after an abort is never left unhandled
    promise.then(
      (value) => {
        done();
        resolve(value);
      },
      (error) => {
        done();
        reject(error);
      },
    );
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The statuses of a redirect. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Headers that carry credentials, dropped on a redirect to another origin (as the platform's fetch does). */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/** Headers that describe a request's body, dropped with it. */
const BODY_HEADERS = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];

/**
 * The request to send to `to` after `from` answered the redirect `status` (the Fetch standard's rules): a 303,
 * or a 301/302 of a POST, becomes a GET without a body; going to another origin drops the credentials.
 */
function redirected(init, status, from, to) {
  const method = (init.method ?? 'GET').toUpperCase();
  const next = { ...init, headers: new Headers(init.headers) };
  const sendsBody = method !== 'GET' && method !== 'HEAD';
  if ((status === 303 && sendsBody) || ((status === 301 || status === 302) && method === 'POST')) {
    next.method = 'GET';
    delete next.body;
    for (const name of BODY_HEADERS) next.headers.delete(name);
  }
  if (from.origin !== to.origin) for (const name of CREDENTIALS) next.headers.delete(name);
  return next;
}

/**
 * `fetchThrough` through `turns` following redirects here rather than in the platform (outside a browser, when
 * `init` leaves `redirect` to "follow"), so that each hop waits for its host's turn and, for a request, is visited
 * as any request (a target robots.txt disallows rejects with `RobotsDisallowed`, never sent). After
 * `maxRedirects` hops the next redirect rejects with a TypeError, as fetch does, or, for robots.txt, is returned
 * as it came. A browser hides where a redirect goes (`redirect: "manual"` answers an opaque response), so there
 * it follows them itself.
 */
export async function fetchFollowing(turns, url, init, maxRedirects, onDecision) {
  if (inBrowser() || (init?.redirect ?? 'follow') !== 'follow') {
    return fetchThrough(turns, url, init, onDecision);
  }
  const robots = turns instanceof RobotsTurns;
  let sending = { ...init, redirect: 'manual' };
  let at = new URL(url);
  for (let hops = 0, attempts = 0; ; hops++) {
    const response = await fetchThrough(turns, at.href, sending, onDecision);
    attempts += response.hostpaceAttempts;
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null || (hops === maxRedirects && robots)) {
      response.hostpaceAttempts = attempts;
      if (hops > 0) Object.defineProperty(response, 'redirected', { value: true });
      return response;
    }
    await response.body?.cancel().catch(() => {});
    if (hops === maxRedirects) throw new TypeError(`fetch failed: more than ${maxRedirects} redirects from ${url}`);
    const target = new URL(location, at);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new TypeError(`fetch failed: ${at.href} redirects to a ${target.protocol} URL`);
    }
    sending = redirected(sending, response.status, at, target);
    at = target;
  }
}


/**
 * `limiter.schedule(url, task, options)` of `Limiter` and `SharedLimiter`: the lifecycle on their turns. Called from
 * their async methods, it runs synchronously up to its first `await`, so with a limiter that answers at once and
 * robots.txt known the departure is reserved before the method returns; anything thrown before that (a bad URL, an
 * aborted signal) becomes a rejected promise, as with fetch.
 */
export function scheduleOnTurns(limiter, url, task, options) {
  const checked = urlArg(url);
  taskArg(task);
  const call = callOptions(options, 'options', false);
  return scheduleThrough(new LocalTurns(limiter, call), checked, task, call);
}

/**
 * `limiter.fetch(input, init)` of `Limiter` and `SharedLimiter` (as `scheduleOnTurns`): robots.txt first, its host's
 * turn, retries after 429/503, redirects hop by hop. Like fetch in a page, a relative URL is resolved against the
 * document (elsewhere it stays invalid, and the visit reports it).
 */
export function fetchOnTurns(limiter, input, init) {
  if (typeof globalThis.fetch !== 'function') throw new Error('no global fetch in this environment');
  let url = urlArg(input);
  if (globalThis.location && typeof globalThis.location.href === 'string') {
    try {
      url = new URL(url, globalThis.location.href).href;
    } catch (_) {
      // left as given: the visit reports it
    }
  }
  const { signal, rest, onDecision, userAgent } = callOptions(init, 'init', true);
  const sending = withUserAgent(rest, userAgent ?? limiter.userAgent);
  return fetchFollowing(new LocalTurns(limiter, { signal, onDecision }), url, sending, 20, onDecision);
}
