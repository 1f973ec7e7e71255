// Types of GatewayLimiter (src/wasm/gateway.js), copied into the npm package by scripts/build-pkg.sh.
import type { Decision, FetchOptions, Layer, Observation, ResponseLike, ScheduleOptions } from './hostpace.js';

/** A departure reserved at the gateway (`POST /v1/acquire`). */
export interface GatewayDecision extends Omit<Decision, 'host'> {
  host: string;
  /** This token's own id for the departure: `depart`, `observe` and `release` name it. */
  departureId?: string;
}

/** The gateway's "not yet" (`Hostpace-Mode: nowait`): nothing was reserved. */
export interface GatewayNotYet {
  notYet: true;
  waitMs: number;
  layer: Layer | 'robots';
  message?: string;
}

/** What an observation changed at the gateway (`POST /v1/observe`). */
export interface GatewayObservation extends Observation {
  verdict?: 'done' | 'retry' | 'giveUp';
  released: boolean;
}

/**
 * An error answer of the gateway. A refusal is named as `Limiter`'s: `RobotsDisallowed` (403
 * `disallowed_by_robots`, with the `url` and the `rule`), `RobotsUnavailable` (503 `robots_unavailable`, with the
 * `url` and `retryAfterMs`), `HostGivenUp` (503 `host_given_up`, with `untilMs`: the host kept pushing back) or
 * `TimeoutError` (503 `departure_held`, with `heldMs`: the host's cooldown holds the request past the call's bound);
 * nothing was sent to the target.
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  readonly url?: string;
  readonly rule?: string;
  readonly retryAfterMs?: number;
  readonly untilMs?: number;
  readonly heldMs?: number;
}

/**
 * The `Limiter` shape backed by a hostpace gateway (`/v1/acquire`, `/v1/observe`): every process using the same
 * gateway shares one politeness budget per host. `acquire`, `observe` and `stats` are asynchronous (round trips).
 */
export class GatewayLimiter {
  constructor(baseUrl: string | URL, token: string, options?: { fetch?: typeof fetch });
  readonly baseUrl: string;
  acquire(url: string): Promise<GatewayDecision>;
  /** Confirm a reserved departure right before sending: 0 means go, else wait that long and confirm again. */
  depart(url: string, decision: GatewayDecision): Promise<number>;
  observe(
    url: string,
    response: ResponseLike,
    latencyMs?: number,
    options?: { departureId?: string; attempt?: number },
  ): Promise<GatewayObservation>;
  /** Give back a departure without a report (`POST /v1/cancel`): its permit comes back. */
  release(url: string, decision: GatewayDecision): Promise<{ released: boolean }>;
  stats(host: string): Promise<Record<string, unknown>>;
  schedule<T>(url: string, task: () => T | PromiseLike<T>, options?: ScheduleOptions): Promise<T>;
  fetch(url: string, init?: RequestInit & FetchOptions): Promise<Response & { hostpaceAttempts: number }>;
}
