// `Limiter`: the JS class around the wasm core's limiter (`Limiter` of src/wasm/limiter.rs, held as `#raw`). It
// checks the types of the per-call methods' arguments (the core takes their URL as a string and their times as
// numbers straight from JS, which keeps a decision cheap, and would misread a value of another type), throws the
// errors the core answers as values (answer.js), and adds what is asynchronous: `schedule` and `fetch`, through
// the request lifecycle (lifecycle.js) and the core's visit (turns.js). Every decision comes from the core.
import { Limiter as RawLimiter } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';
import { kind, numberArg, rulesChanged, urlArg, wake } from './lifecycle.js';
import { fetchOnTurns, scheduleOnTurns } from './turns.js';

/** A raw limiter being wrapped by `Limiter.restore` (set only for the synchronous call of the constructor). */
let adopting;

/** The raw limiter a `Limiter` holds (for `Frontier`), or undefined for anything else. */
let rawOf;

export class Limiter {
  #raw;

  static {
    rawOf = (limiter) => (#raw in Object(limiter) ? limiter.#raw : undefined);
  }

  /**
   * A limiter; throws a `TypeError` naming an unknown field or a value of the wrong type, an `Error` naming a
   * value out of range.
   */
  constructor(config) {
    const raw = adopting;
    adopting = undefined;
    this.#raw = raw ?? new RawLimiter(config);
  }

  /** A limiter from `snapshot()`'s string: the same config, and every host owes exactly what it owed. */
  static restore(snapshot) {
    adopting = thrown(RawLimiter.restore(snapshot));
    return new Limiter();
  }

  /** Free the core's memory now (a limiter not freed is freed when it is collected). */
  free() {
    this.#raw.free();
  }

  [DISPOSE]() {
    this.free();
  }

  get warnings() {
    return this.#raw.warnings;
  }

  get userAgent() {
    return this.#raw.userAgent;
  }

  get size() {
    return this.#raw.size;
  }

  acquire(url, nowMs) {
    return thrown(this.#raw.acquire(urlArg(url), numberArg(nowMs, 'nowMs', true)));
  }

  peek(url, nowMs) {
    return thrown(this.#raw.peek(urlArg(url), numberArg(nowMs, 'nowMs', true)));
  }

  intern(url) {
    return thrown(this.#raw.intern(urlArg(url)));
  }

  acquireId(id, nowMs) {
    return thrown(this.#raw.acquireId(numberArg(id, 'id', false), numberArg(nowMs, 'nowMs', true)));
  }

  acquireIds(ids, nowsMs, waitsOut) {
    return thrown(this.#raw.acquireIds(ids, nowsMs, waitsOut));
  }

  depart(url, departsMs) {
    return thrown(this.#raw.depart(urlArg(url), numberArg(departsMs, 'departsMs', true)));
  }

  sent(url, atMs) {
    return thrown(this.#raw.sent(urlArg(url), numberArg(atMs, 'atMs', true)));
  }

  /** Give back a concurrency permit, and wake the calls of `schedule` and `fetch` waiting for one. */
  release(url, permitId) {
    thrown(this.#raw.release(url, permitId));
    wake(this);
  }

  observe(url, response, latencyMs, nowMs) {
    return thrown(this.#raw.observe(url, response, latencyMs, nowMs));
  }

  observeFailure(url) {
    return thrown(this.#raw.observeFailure(url));
  }

  retryVerdict(status, attempts) {
    return thrown(this.#raw.retryVerdict(status, attempts));
  }

  visit(url, nowMs, maxWaitMs) {
    const checked = urlArg(url);
    return thrown(this.#raw.visit(checked, numberArg(nowMs, 'nowMs', true), numberArg(maxWaitMs, 'maxWaitMs', true)));
  }

  robotsCheck(url, nowMs) {
    return thrown(this.#raw.robotsCheck(urlArg(url), numberArg(nowMs, 'nowMs', true)));
  }

  robotsFetched(host, status, robotsTxt, userAgent, nowMs, fetch) {
    return thrown(this.#raw.robotsFetched(host, status, robotsTxt, userAgent, nowMs, fetch));
  }

  stats(host, nowMs) {
    return thrown(this.#raw.stats(host, nowMs));
  }

  snapshot() {
    return this.#raw.snapshot();
  }

  /** Give the hosts `pattern` names a pace of their own (see hostpace.d.ts); waiting calls are decided anew. */
  setPolicy(pattern, policy) {
    thrown(this.#raw.setPolicy(pattern, policy));
    rulesChanged(this);
  }

  /** Block the hosts `pattern` names, for `reason`; waiting calls for them reject with `HostBlocked`. */
  block(pattern, reason) {
    thrown(this.#raw.block(pattern, reason));
    rulesChanged(this);
  }

  unblock(pattern) {
    thrown(this.#raw.unblock(pattern));
    rulesChanged(this);
  }

  rules() {
    return thrown(this.#raw.rules());
  }

  /** `robotsTxt` as `host`'s robots.txt, fetched at `nowMs`: `robotsFetched` with status 200. */
  setRobots(host, robotsTxt, userAgent, nowMs) {
    if (typeof robotsTxt !== 'string') {
      throw new TypeError(`invalid robotsTxt: expected a string, got ${kind(robotsTxt)}`);
    }
    return this.robotsFetched(host, 200, robotsTxt, userAgent, nowMs);
  }

  /** A fetch of `host`'s robots.txt answered `status` without rules: `robotsFetched` without a text. */
  robotsStatus(host, status, nowMs) {
    this.robotsFetched(host, status, undefined, undefined, nowMs);
  }

  /**
   * Whether `url` may be fetched by what is known of its host's robots.txt at `nowMs`: false when a rule disallows
   * it or the file is unreachable (5xx, 429, no answer); true otherwise, and while nothing is known yet.
   */
  allowed(url, nowMs) {
    const { verdict } = this.robotsCheck(url, nowMs);
    return verdict === 'allowed' || verdict === 'pending';
  }

  /** Wait for `url`'s host's turn, run `task`, learn from its result, release its permit (see hostpace.d.ts). */
  async schedule(url, task, options) {
    return scheduleOnTurns(this, url, task, options);
  }

  /** A polite `fetch(url, init)`: robots.txt first, its host's turn, retries after 429/503 (see hostpace.d.ts). */
  async fetch(input, init) {
    return fetchOnTurns(this, input, init);
  }
}

/** The raw limiter `limiter` holds; a TypeError when it is not a `Limiter`. */
export function rawLimiter(limiter) {
  const raw = rawOf(limiter);
  if (raw === undefined) throw new TypeError(`invalid limiter: expected a Limiter, got ${kind(limiter)}`);
  return raw;
}
