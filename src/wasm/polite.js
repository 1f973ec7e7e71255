// The JavaScript half of Limiter: `schedule` and `fetch` through the request lifecycle (lifecycle.js, shared with
// GatewayLimiter), and the argument checks of the per-call methods. Every decision (waits, layers, confirmations,
// retry verdicts) comes from the wasm core; this file only adapts and calls.
// Copied into the npm package by scripts/build-pkg.sh and imported by each entry point.
import { Frontier, Limiter } from './hostpace.js';
import { fetchThrough, numberArg, scheduleThrough, urlArg, wake } from './lifecycle.js';

/** `Limiter`'s side of the request lifecycle (lifecycle.js): its core answers every call at once. */
class LocalTurns {
  constructor(limiter) {
    this.owner = limiter;
  }

  acquire(url) {
    return this.owner.acquire(url);
  }

  depart(url, decision) {
    return this.owner.depart(url, decision.departsMs);
  }

  observe(url, decision, response, latencyMs) {
    try {
      return this.owner.observe(url, response, latencyMs);
    } finally {
      this.release(url, decision);
    }
  }

  observeFailure(url, decision) {
    this.release(url, decision);
    this.owner.observeFailure(url);
  }

  release(url, decision) {
    if (decision.permitId !== undefined) this.owner.release(url, decision.permitId);
  }

  retryVerdict(response, attempt) {
    return this.owner.retryVerdict(response.status, attempt);
  }
}

// Argument checks of the per-call methods (acquire, peek, intern, acquireId, depart; Frontier's push, pop, take,
// waitMs). The core takes their URL as a string and their times as numbers straight from JS, which is what keeps
// a decision cheap (an argument read as a JS value in Rust costs more than the decision itself); a value of
// another type would be misread by those conversions, so it is refused here first, by name, with a TypeError.
// Every other method reads and checks its arguments in Rust.

const limiterRaw = Limiter.prototype;
const { acquire, peek, intern, acquireId, depart } = limiterRaw;
limiterRaw.acquire = function (url, nowMs) {
  return acquire.call(this, urlArg(url), numberArg(nowMs, 'nowMs', true));
};
limiterRaw.peek = function (url, nowMs) {
  return peek.call(this, urlArg(url), numberArg(nowMs, 'nowMs', true));
};
limiterRaw.intern = function (url) {
  return intern.call(this, urlArg(url));
};
limiterRaw.acquireId = function (id, nowMs) {
  return acquireId.call(this, numberArg(id, 'id', false), numberArg(nowMs, 'nowMs', true));
};
limiterRaw.depart = function (url, departsMs) {
  return depart.call(this, urlArg(url), numberArg(departsMs, 'departsMs', true));
};
const frontierRaw = Frontier.prototype;
const { push, pop, take, waitMs } = frontierRaw;
frontierRaw.push = function (url, priority) {
  return push.call(this, urlArg(url), numberArg(priority, 'priority', true));
};
frontierRaw.pop = function (nowMs) {
  return pop.call(this, numberArg(nowMs, 'nowMs', true));
};
frontierRaw.take = function (nowMs) {
  return take.call(this, numberArg(nowMs, 'nowMs', true));
};
frontierRaw.waitMs = function (nowMs) {
  return waitMs.call(this, numberArg(nowMs, 'nowMs', true));
};

const rawRelease = Limiter.prototype.release;
Limiter.prototype.release = function release(url, permitId) {
  rawRelease.call(this, url, permitId);
  wake(this);
};

// Both are async functions: they run synchronously up to their first `await`, so the departure is reserved
// before they return, and anything thrown before that (a bad URL, an aborted signal) becomes a rejected promise,
// as with fetch.
Limiter.prototype.schedule = async function schedule(url, task, options) {
  return scheduleThrough(new LocalTurns(this), url, task, options);
};

Limiter.prototype.fetch = async function politeFetch(input, init) {
  if (typeof globalThis.fetch !== 'function') throw new Error('no global fetch in this environment');
  // like fetch in a page: a relative URL is resolved against the document (elsewhere it stays invalid)
  let url = urlArg(input);
  if (globalThis.location && typeof globalThis.location.href === 'string') {
    try {
      url = new URL(url, globalThis.location.href).href;
    } catch (_) {
      // left as given: acquire() reports it
    }
  }
  return fetchThrough(new LocalTurns(this), url, init);
};
