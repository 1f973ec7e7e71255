// GatewayLimiter: the `Limiter` shape (acquire / schedule / fetch / observe) backed by a hostpace gateway's
// permission API (POST /v1/acquire, /v1/depart, /v1/observe, /v1/cancel), so every process of a crawler fleet shares one budget per
// host. Moving a crawler from one process to a fleet is one line: `new Limiter(config)` becomes
// `new GatewayLimiter(baseUrl, token)`. Every wait, cooldown and retry verdict comes from the gateway (its host
// objects run the same core); this file only calls it, and `schedule` and `fetch` go through the request lifecycle
// shared with `Limiter` (lifecycle.js). Plain JavaScript: it adds nothing to the wasm module. Copied into the npm package by scripts/build-pkg.sh and exported by each entry point.

import {
  callOptions,
  fetchThrough,
  headerPairs,
  isResponseLike,
  scheduleThrough,
  urlArg,
  withUserAgent,
} from './lifecycle.js';

/** The `departureId` of a decision (or of observe's options), checked to be a string when present. */
function departureOf(from) {
  const id = from === undefined || from === null ? undefined : from.departureId;
  if (id !== undefined && typeof id !== 'string') {
    throw new TypeError(`invalid departureId: expected the string acquire gave, got ${typeof id}`);
  }
  return id;
}

/** An error answer of the gateway: `status` and `code` say what it refused. */
export class GatewayError extends Error {
  constructor(status, code, message) {
    super(`hostpace gateway: ${status} ${code}: ${message}`);
    this.name = 'GatewayError';
    this.status = status;
    this.code = code;
  }
}

export class GatewayLimiter {
  /**
   * @param {string} baseUrl the gateway, e.g. `https://gateway.example` or `http://127.0.0.1:8787`
   * @param {string} token the gateway's bearer token (its `GATEWAY_TOKEN` secret)
   * @param {{ fetch?: typeof fetch }} [options] `fetch` to reach the gateway (default: the global one)
   */
  constructor(baseUrl, token, options = {}) {
    let base;
    try {
      base = new URL(String(baseUrl));
    } catch (_) {
      throw new Error(`invalid gateway URL ${JSON.stringify(String(baseUrl))}: expected an absolute http(s) URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new Error(`invalid gateway URL ${JSON.stringify(base.href)}: expected http: or https:`);
    }
    if (typeof token !== 'string' || token === '') throw new Error('invalid token: expected a non-empty string');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new Error('no fetch available: pass options.fetch');
    this.baseUrl = base.href.replace(/\/+$/, '');
    this.#token = token;
    this.#fetch = fetchImpl;
  }

  #token;
  #fetch;

  /** The gateway's side of the request lifecycle (lifecycle.js): every call a round trip. */
  #turns = {
    owner: this,
    acquire: (url) => this.acquire(url),
    // the host's object confirms until go (holding a departure behind a cooldown itself): a wait is all it says
    depart: async (url, decision) => ({ waitMs: await this.depart(url, decision) }),
    observe: (url, decision, response, latencyMs, attempt) =>
      this.observe(url, response, latencyMs, { departureId: decision.departureId, attempt }),
    // a task that failed counts as a timeout, and its permit comes back in the same call
    observeFailure: (url, decision) =>
      this.#call('POST', '/v1/observe', { url: urlArg(url), timeout: true, departureId: decision.departureId }),
    release: (url, decision) => this.release(url, decision),
    // the gateway decided when it observed the response
    retryVerdict: (_response, _attempt, observed) => observed && observed.verdict,
  };

  async #call(method, path, body) {
    const init = { method, headers: { authorization: `Bearer ${this.#token}` } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await this.#fetch.call(globalThis, `${this.baseUrl}${path}`, init);
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch (_) {
      throw new GatewayError(res.status, 'invalid_answer', `not JSON: ${text.slice(0, 200)}`);
    }
    if (!res.ok && res.status !== 429) {
      const e = json && json.error ? json.error : { code: 'unknown', message: text.slice(0, 200) };
      const error = new GatewayError(res.status, e.code, e.message);
      // refusals by robots.txt carry the names Limiter's have
      if (e.code === 'disallowed_by_robots') {
        Object.assign(error, { name: 'RobotsDisallowed', url: body && body.url, rule: res.headers.get('hostpace-robots-rule') ?? undefined });
      } else if (e.code === 'robots_unavailable') {
        const retryAfterMs = Number(res.headers.get('retry-after')) * 1000;
        Object.assign(error, { name: 'RobotsUnavailable', url: body && body.url, retryAfterMs });
      } else if (e.code === 'host_given_up') {
        // the host kept pushing back: nothing is sent there until untilMs (Limiter's name and field)
        const waitMs = Number(res.headers.get('hostpace-wait-ms') ?? Number(res.headers.get('retry-after')) * 1000);
        Object.assign(error, { name: 'HostGivenUp', untilMs: Date.now() + waitMs });
      } else if (e.code === 'departure_held') {
        // held behind the host's cooldown past this call's bound: named as Limiter names its timeout
        Object.assign(error, { name: 'TimeoutError', heldMs: Number(res.headers.get('hostpace-wait-ms') ?? 0) });
      }
      throw error;
    }
    if (res.status === 429) {
      // "not yet" (Hostpace-Mode: nowait): a wait, not an error
      const e = json && json.error ? json.error : {};
      return {
        notYet: true,
        waitMs: Number(res.headers.get('hostpace-wait-ms') ?? 0),
        layer: res.headers.get('hostpace-layer') ?? 'none',
        message: e.message,
      };
    }
    return json;
  }

  /**
   * Reserve a departure for `url` at the gateway: `{ host, waitMs, layer, departsMs, reserved, permitId?,
   * departureId? }`. The `departureId` is this token's own: `depart`, `observe` and `release` name it.
   * Unlike `Limiter.acquire` this is asynchronous (a round trip). Wait `waitMs`, then go (when `reserved` is false
   * every concurrency permit is held: wait `waitMs` and acquire again).
   */
  async acquire(url) {
    return this.#call('POST', '/v1/acquire', { url: urlArg(url) });
  }

  /**
   * Confirm, right before sending, a departure `acquire` reserved: resolves to 0 (go) or the milliseconds to wait
   * and confirm again, so a late timer or a request that left late never brings two departures to the host
   * closer than its spacing (as `Limiter.depart`). `schedule` and `fetch` do this themselves.
   */
  async depart(url, decision) {
    const answer = await this.#call('POST', '/v1/depart', { url: urlArg(url), departureId: departureOf(decision) });
    return answer.waitMs;
  }

  /**
   * Tell the gateway what came back for `url` (a fetch `Response` or `{ status, headers, latencyMs? }`);
   * `latencyMs` (the argument, else the response's own) feeds adaptive pacing.
   * A 429/503 cools the host down for every process sharing the gateway. Resolves to what the observation changed.
   * `options.departureId` is the departure's (from `acquire`; the gateway refuses a report on a departure this token
   * was not given).
   */
  async observe(url, response, latencyMs, options = {}) {
    if (!isResponseLike(response)) throw new Error('invalid response: expected a Response or { status, headers }');
    const body = { url: urlArg(url), status: response.status, headers: headerPairs(response.headers) };
    const latency = latencyMs ?? response.latencyMs;
    if (typeof latency === 'number' && Number.isFinite(latency) && latency >= 0) body.latencyMs = latency;
    body.departureId = departureOf(options);
    if (options.attempt !== undefined) body.attempt = options.attempt;
    return this.#call('POST', '/v1/observe', body);
  }

  /**
   * Give back a departure `acquire` reserved without reporting a response (the task failed, returned no response,
   * or will not run): it stops counting against this token and its permit comes back (`POST /v1/cancel`).
   */
  async release(url, decision) {
    if (!decision || decision.departureId === undefined) return { released: false };
    return this.#call('POST', '/v1/cancel', { url: urlArg(url), departureId: departureOf(decision) });
  }

  /** Policy, state and counters of one host at the gateway (`GET /v1/hosts/{host}`). */
  async stats(host) {
    return this.#call('GET', `/v1/hosts/${encodeURIComponent(String(host))}`);
  }

  /**
   * Wait for `url`'s host's turn at the gateway, run `task`, report its result if it is a `Response`, give back
   * its permit. `options.signal` aborts the wait; `options.timeoutMs` and `options.onDecision` as for `fetch`.
   */
  async schedule(url, task, options) {
    return scheduleThrough(this.#turns, url, task, callOptions(options, 'options', false));
  }

  /**
   * A polite `fetch(url, init)` paced by the gateway: on 429/503 the gateway's host object cools the host down
   * (Retry-After, capped) and says whether to retry; after `maxRetries` retries the last response is returned.
   * `hostpaceAttempts` says how many attempts it took. `init` takes `timeoutMs`, `userAgent` and `onDecision` as
   * `Limiter.fetch` does.
   */
  async fetch(url, init) {
    const checked = urlArg(url);
    const { rest, onDecision, userAgent } = callOptions(init, 'init', true);
    return fetchThrough(this.#turns, checked, withUserAgent(rest, userAgent), onDecision);
  }
}
