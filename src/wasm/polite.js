// The asynchronous half of Limiter: sleep for the waits the core computed, run the task, report back.
// Every decision (waits, layers, retry verdicts) comes from the wasm core; this file only waits and calls.
// Copied into the npm package by scripts/build-pkg.sh and imported by each entry point.
import { Frontier, Limiter, nowMs } from './hostpace.js';

/** Calls waiting for a concurrency permit of a limiter, woken on every release. */
const waiting = new WeakMap();

function wake(limiter) {
  const set = waiting.get(limiter);
  if (set) {
    waiting.delete(limiter);
    for (const resolve of set) resolve();
  }
}

/** The reason an aborted `signal` gives (shared with gateway.js). */
export function abortReason(signal) {
  return signal.reason !== undefined ? signal.reason : new Error('the operation was aborted');
}

/** Resolve after `ms` (or on a release of `limiter`'s permits, when given); reject if `signal` aborts first. */
export function sleep(ms, signal, limiter) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    let timer;
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const done = () => {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      resolve();
    };
    timer = setTimeout(done, Math.max(0, ms));
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    if (limiter) {
      let set = waiting.get(limiter);
      if (!set) waiting.set(limiter, (set = new Set()));
      set.add(done);
    }
  });
}

export function isResponseLike(value) {
  return value !== null && typeof value === 'object' && typeof value.status === 'number';
}

async function runReserved(limiter, url, decision, signal, task) {
  while (!decision.reserved) {
    // every permit is held: wait for a release or the first lease to end, then ask again
    await sleep(decision.waitMs, signal, limiter);
    decision = limiter.acquire(url);
  }
  const permit = decision.permitId;
  const release = () => {
    if (permit !== undefined) limiter.release(url, permit);
  };
  try {
    await sleep(decision.waitMs, signal);
    // Timers may fire early, and a departure before this one may have left late: wait until the reserved
    // instant has really come, then until the core confirms the interval since the last real departure.
    for (;;) {
      const early = decision.departsMs - nowMs();
      const extra = early > 0 ? early : limiter.depart(url);
      if (extra <= 0) break;
      await sleep(extra, signal);
    }
  } catch (reason) {
    release(); // an aborted wait gives back its permit (its slot in the pacing stays spent)
    throw reason;
  }
  const started = nowMs();
  let result;
  try {
    result = await task();
  } catch (error) {
    release();
    limiter.observeFailure(url);
    throw error;
  }
  try {
    if (isResponseLike(result)) limiter.observe(url, result, nowMs() - started);
  } finally {
    release();
  }
  return result;
}

// Argument checks of the per-call methods (acquire, peek, intern, acquireId, depart; Frontier's push, pop, take,
// waitMs). The core takes their URL as a string and their times as numbers straight from JS, which is what keeps
// a decision cheap (an argument read as a JS value in Rust costs more than the decision itself); a value of
// another type would be misread by those conversions, so it is refused here first, by name, with a TypeError.
// Every other method reads and checks its arguments in Rust.

/** What kind of value `value` is, for messages (never its contents). */
function kind(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'undefined' ? 'undefined' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A URL as the core reads it: a string, or a `URL` object's `href`. */
function urlArg(value) {
  if (typeof value === 'string') return value;
  if (value instanceof URL) return value.href;
  throw new TypeError(`invalid url: expected a URL string or a URL object, got ${kind(value)}`);
}

/** A number, or (when `optional`) `undefined`/`null`. */
function numberArg(value, name, optional) {
  if (typeof value === 'number' || (optional && (value === undefined || value === null))) return value;
  throw new TypeError(`invalid ${name}: expected a number${optional ? ' or undefined' : ''}, got ${kind(value)}`);
}

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
limiterRaw.depart = function (url) {
  return depart.call(this, urlArg(url));
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
  if (typeof task !== 'function') throw new Error('invalid task: expected a function returning a value or promise');
  const signal = options ? options.signal : undefined;
  if (signal && signal.aborted) throw abortReason(signal);
  return runReserved(this, url, this.acquire(url), signal, task);
};

Limiter.prototype.fetch = async function politeFetch(input, init) {
  if (typeof globalThis.fetch !== 'function') throw new Error('no global fetch in this environment');
  if (typeof input !== 'string' && !(input instanceof URL)) {
    throw new TypeError(`invalid url: expected a URL string or a URL object, got ${input === null ? 'null' : typeof input}`);
  }
  // like fetch in a page: a relative URL is resolved against the document (elsewhere it stays invalid)
  let url = String(input);
  if (globalThis.location && typeof globalThis.location.href === 'string') {
    try {
      url = new URL(url, globalThis.location.href).href;
    } catch (_) {
      // left as given: acquire() reports it
    }
  }
  const signal = init ? init.signal : undefined;
  if (signal && signal.aborted) throw abortReason(signal);
  let decision = this.acquire(url);
  for (let attempt = 1; ; attempt++) {
    const response = await runReserved(this, url, decision, signal, () => globalThis.fetch(url, init));
    if (this.retryVerdict(response.status, attempt) !== 'retry') {
      response.hostpaceAttempts = attempt;
      return response;
    }
    try {
      if (response.body) await response.body.cancel();
    } catch (_) {
      // a body already consumed cannot be cancelled; nothing to free
    }
    if (signal && signal.aborted) throw abortReason(signal);
    decision = this.acquire(url);
  }
};
