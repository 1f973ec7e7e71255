// One request's lifecycle, shared by `Limiter` (limiter.js, turns.js) and `GatewayLimiter` (gateway.js): wait for
// the reserved turn (asking again while every concurrency permit is held), confirm it until the limiter says go,
// run the task, report its response or its failure, give back the permit; for `fetch`, retry while the limiter's
// verdict says so and cancel the body of a response not returned. Every wait and verdict comes from the limiter,
// through an adapter; this file only sleeps and calls. Each adapter method may answer at once or with a promise:
//
//   acquire(url)                              reserve a departure: { waitMs, reserved, permitId?, ... }
//   depart(url, decision)                     confirm it: { waitMs, departsMs?, held? }: waitMs 0 (go), or wait
//                                             and confirm again; when held (the host pushed back after it was
//                                             reserved), the departure was reserved again for departsMs
//   observe(url, decision, response, latencyMs, attempt)
//                                             learn from a response and give back the decision's permit;
//                                             answers what the observation changed (handed to retryVerdict)
//   observeFailure(url, decision)             the task failed (threw, or a network error): record it and give
//                                             back the permit
//   release(url, decision)                    give back the permit (an aborted wait, a result not a response)
//   retryVerdict(response, attempt, observed) 'retry' to send the request again, anything else to return it
//   owner                                     optional: the object whose `wake(owner)` ends a wait for a permit
//
// Plain JavaScript: it adds nothing to the wasm, and only asks it the User-Agent rule. Copied into the npm package by
// scripts/build-pkg.sh.

import { checkUserAgent } from './hostpace.js';
import { thrown } from './answer.js';

/** The instant (`performance.now()`) by which a call's signal aborts with its `timeoutMs`, by signal. */
const deadlines = new WeakMap();

/**
 * The error of a request the host's pushback holds past its call's `timeoutMs`: it fails now, named as the timeout
 * it would end in, never sent.
 */
function heldPastDeadline(url, waitMs) {
  const message = `${url}: its host pushed back and holds it ${Math.ceil(waitMs)} ms, past this call's timeoutMs`;
  return Object.assign(new Error(message), { name: 'TimeoutError', heldMs: waitMs });
}

/** Calls waiting for a concurrency permit, by owner, woken on every release. */
const waiting = new WeakMap();

/** Wake every call waiting for a permit of `owner` (it gave one back): each asks again. */
export function wake(owner) {
  const set = owner === undefined ? undefined : waiting.get(owner);
  if (set) {
    waiting.delete(owner);
    for (const resolve of set) resolve();
  }
}

/** Per owner, what the calls waiting for a reserved departure sleep under: woken when an operator's rule changes. */
const reservedWaits = new WeakMap();

function reservedKey(owner) {
  if (Object(owner) !== owner) return undefined;
  let key = reservedWaits.get(owner);
  if (key === undefined) {
    key = {};
    reservedWaits.set(owner, key);
  }
  return key;
}

/**
 * An operator's rule of `owner` changed (`setPolicy`, `block`, `unblock`): every waiting call confirms its turn
 * again (a blocked host's are refused at once) and every call waiting for a permit asks again.
 */
export function rulesChanged(owner) {
  wake(reservedWaits.get(owner));
  wake(owner);
}

/** The reason an aborted `signal` gives. */
export function abortReason(signal) {
  return signal.reason !== undefined ? signal.reason : new Error('the operation was aborted');
}

/** Resolve after `ms` (or on `wake(owner)`, when given); reject if `signal` aborts first. */
export function sleep(ms, signal, owner) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    let timer;
    let set;
    const onAbort = () => {
      clearTimeout(timer);
      if (set) set.delete(done);
      reject(abortReason(signal));
    };
    const done = () => {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      if (set) set.delete(done);
      resolve();
    };
    // (a timer longer than 2^31 - 1 ms fires at once: a longer wait ends there, and its caller asks again)
    timer = setTimeout(done, Math.min(Math.max(0, ms), 2 ** 31 - 1));
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    if (owner !== undefined) {
      set = waiting.get(owner);
      if (!set) waiting.set(owner, (set = new Set()));
      set.add(done);
    }
  });
}

/** What kind of value `value` is, for messages (never its contents). */
export function kind(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'undefined' ? 'undefined' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A URL argument as the limiters read it: a string, or a `URL` object's `href`; else a TypeError. */
export function urlArg(value) {
  if (typeof value === 'string') return value;
  if (value instanceof URL) {
    const href = value.href;
    if (typeof href === 'string') return href;
  }
  throw new TypeError(`invalid url: expected a URL string or a URL object, got ${kind(value)}`);
}

/** A number argument, or (when `optional`) `undefined`/`null`; else a TypeError naming it. */
export function numberArg(value, name, optional) {
  if (typeof value === 'number' || (optional && (value === undefined || value === null))) return value;
  throw new TypeError(`invalid ${name}: expected a number${optional ? ' or undefined' : ''}, got ${kind(value)}`);
}

/** `options.signal`: an `AbortSignal` or absent; else a TypeError naming it. */
export function signalOf(options, name) {
  const signal = options === undefined || options === null ? undefined : options.signal;
  if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal)) {
    throw new TypeError(`invalid ${name}.signal: expected an AbortSignal, got ${kind(signal)}`);
  }
  return signal ?? undefined;
}

/**
 * Response headers as `[name, value]` pairs, from a `Headers`, pairs, or a plain object (a got response's
 * `{ name: value | value[] }`: a list is joined with ", ", an undefined value left out).
 */
export function headerPairs(headers) {
  if (!headers) return [];
  if (typeof headers.forEach === 'function' && typeof headers.get === 'function') {
    const pairs = [];
    headers.forEach((value, name) => pairs.push([name, value]));
    return pairs;
  }
  if (Array.isArray(headers)) return headers.map(([name, value]) => [String(name), String(value)]);
  return Object.entries(headers)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]);
}

export function isResponseLike(value) {
  return value !== null && typeof value === 'object' && typeof value.status === 'number';
}

/** Run `report` (an adapter call that gives back a permit), then wake the owner's waiters, even if it failed. */
async function givingBack(adapter, report) {
  try {
    return await report();
  } finally {
    wake(adapter.owner);
  }
}

/** The same, for a path that already rejects with its own reason: a failure of the report is dropped. */
async function givingBackQuietly(adapter, report) {
  try {
    await givingBack(adapter, report);
  } catch (_) {
    // the caller sees the reason it is already failing with
  }
}

/**
 * Wait for a reserved turn to `url` and confirm it: the decision to send under. The first `acquire` is called
 * synchronously, so the departure is reserved before the caller's promise is even returned.
 */
async function turn(adapter, url, signal) {
  const asked = performance.now();
  for (;;) {
    if (signal && signal.aborted) throw abortReason(signal);
    const decision = await adapter.acquire(url);
    if (decision.reserved) {
      try {
        // Timers may fire early, and a departure before this one may have left late: after the wait, confirm
        // until the limiter says go.
        // A departure held by the host's pushback is reserved again behind its cooldown: confirm that one next.
        // (woken early by a change of rules: confirming early answers what remains)
        const owner = reservedKey(adapter.owner);
        await sleep(decision.waitMs, signal, owner);
        for (let d = await adapter.depart(url, decision); d.waitMs > 0; d = await adapter.depart(url, decision)) {
          if (d.held) {
            decision.departsMs = d.departsMs;
            const deadline = signal && deadlines.get(signal);
            if (deadline !== undefined && performance.now() + d.waitMs > deadline) throw heldPastDeadline(url, d.waitMs);
          }
          await sleep(d.waitMs, signal, owner);
        }
      } catch (reason) {
        // an aborted wait gives back its permit (its slot in the pacing stays spent)
        await givingBackQuietly(adapter, () => adapter.release(url, decision));
        throw reason;
      }
      return { decision, waitedMs: performance.now() - asked };
    }
    // every permit is held: wait for a release or the first lease to end, then ask again
    await sleep(decision.waitMs, signal, adapter.owner);
  }
}

/**
 * One attempt: the turn, the task, the report, then `onDecision` (when given) with what happened.
 * `{ result, observed }` (`observed` only for a response).
 */
async function attempt(adapter, url, task, signal, n, onDecision) {
  const { decision, waitedMs } = await turn(adapter, url, signal);
  const decided = (status) =>
    onDecision &&
    onDecision({
      host: decision.host ?? new URL(url).host,
      url,
      purpose: 'request',
      attempt: n ?? 1,
      waitMs: Math.round(waitedMs),
      layer: decision.layer,
      status,
    });
  const started = performance.now();
  let result;
  try {
    result = await task();
  } catch (error) {
    await givingBackQuietly(adapter, () => adapter.observeFailure(url, decision));
    decided(undefined);
    throw error;
  }
  let responseLike;
  try {
    responseLike = isResponseLike(result); // reads the result's `status`: the caller's code, which may throw
  } catch (error) {
    await givingBackQuietly(adapter, () => adapter.release(url, decision));
    throw error;
  }
  if (!responseLike) {
    await givingBack(adapter, () => adapter.release(url, decision));
    decided(undefined);
    return { result, observed: undefined };
  }
  const latencyMs = performance.now() - started;
  const observed = await givingBack(adapter, () => adapter.observe(url, decision, result, latencyMs, n));
  decided(result.status);
  return { result, observed };
}

/** `task` when it is a function; else a TypeError naming it. */
export function taskArg(task) {
  if (typeof task !== 'function') {
    throw new TypeError(`invalid task: expected a function returning a value or promise, got ${kind(task)}`);
  }
  return task;
}

/** Whether this runs in a browser, which decides the User-Agent itself and hides a redirect's target. */
export function inBrowser() {
  const platform = globalThis.navigator?.userAgent;
  return typeof platform === 'string' && platform.startsWith('Mozilla/');
}

/**
 * `init` with the crawler's User-Agent, unless it sets one or runs in a browser (which decides the header itself,
 * and would make a cross-origin request with it need a CORS preflight).
 */
export function withUserAgent(init, userAgent) {
  if (inBrowser() || userAgent === undefined) return init;
  const headers = new Headers(init?.headers ?? undefined);
  if (!headers.has('user-agent')) headers.set('user-agent', userAgent);
  return { ...init, headers };
}

/** The longest timer the platforms keep (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `signal` that also aborts with a `TimeoutError` after `timeoutMs`. */
function withTimeout(signal, timeoutMs) {
  const timeout = AbortSignal.timeout(timeoutMs);
  if (!signal) return timeout;
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([signal, timeout]);
  const both = new AbortController();
  const follow = (s) => (s.aborted ? both.abort(s.reason) : s.addEventListener('abort', () => both.abort(s.reason)));
  follow(signal);
  follow(timeout);
  return both.signal;
}

/**
 * The options hostpace reads from a `fetch` init or `schedule` options, checked (a TypeError names a bad one):
 * `signal`; `timeoutMs`, a bound on the whole call (turns, robots.txt, every attempt, the response's body), which
 * then rejects with a `TimeoutError` as `AbortSignal.timeout` does; `onDecision(event)`, told of each attempt;
 * `userAgent`, this call's User-Agent (only where the call `sends` a request). `rest` is the init without
 * hostpace's own options, with the signal that carries the timeout.
 */
export function callOptions(options, name, sends) {
  const signal = signalOf(options, name);
  if (options === undefined || options === null) return { signal, rest: options };
  const { timeoutMs, onDecision, userAgent, ...rest } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    const got = typeof timeoutMs === 'number' ? `the number ${timeoutMs}` : kind(timeoutMs);
    throw new TypeError(`invalid ${name}.timeoutMs: expected milliseconds > 0 and at most 2^31 - 1, got ${got}`);
  }
  if (onDecision !== undefined && typeof onDecision !== 'function') {
    throw new TypeError(`invalid ${name}.onDecision: expected a function, got ${kind(onDecision)}`);
  }
  if (userAgent !== undefined && !sends) {
    throw new TypeError(`invalid ${name}.userAgent: schedule sends nothing (fetch does)`);
  }
  // the core's User-Agent rule (the config's userAgent keeps it too)
  if (userAgent !== undefined) thrown(checkUserAgent(userAgent, `${name}.userAgent`));
  const bounded = timeoutMs === undefined ? signal : withTimeout(signal, timeoutMs);
  if (timeoutMs !== undefined) deadlines.set(bounded, performance.now() + timeoutMs);
  if (bounded !== undefined) rest.signal = bounded;
  return { signal: bounded, rest, onDecision, userAgent };
}

/**
 * `schedule(url, task, options)` through `adapter`: wait the turn, run `task`, report, give back the permit. `signal`
 * and `onDecision` as `callOptions` read them.
 */
export async function scheduleThrough(adapter, url, task, { signal, onDecision } = {}) {
  taskArg(task);
  return (await attempt(adapter, url, task, signal, undefined, onDecision)).result;
}

/**
 * `fetch(url, init)` through `adapter`: one attempt after another while its verdict says retry. `init` is what
 * `callOptions` left for the platform's fetch; `onDecision` is told of each attempt.
 */
export async function fetchThrough(adapter, url, init, onDecision) {
  const signal = init ? init.signal : undefined;
  for (let n = 1; ; n++) {
    const { result: response, observed } = await attempt(
      adapter,
      url,
      () => globalThis.fetch(url, init),
      signal,
      n,
      onDecision,
    );
    if ((await adapter.retryVerdict(response, n, observed)) !== 'retry') {
      response.hostpaceAttempts = n;
      return response;
    }
    try {
      if (response.body) await response.body.cancel();
    } catch (_) {
      // a body already consumed cannot be cancelled; nothing to free
    }
  }
}
