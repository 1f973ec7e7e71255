// Types of SharedLimiter (src/wasm/shared-limiter.js), copied into the npm package by scripts/build-pkg.sh.
import type {
  Decision,
  Departure,
  FetchOptions,
  HostStats,
  LimiterConfig,
  Observation,
  ResponseLike,
  RobotsOutcome,
  ScheduleOptions,
  Turn,
  UrlLike,
} from './hostpace.js';

/**
 * What `SharedLimiter` needs of a store that the processes of a fleet share: `redisStore` (`hostpace/redis`) makes
 * one of a Redis or Valkey client; implement it for any other. Keys are short ASCII strings; values are strings.
 */
export interface SharedStore {
  /** The store's clock: milliseconds since the epoch (Redis `TIME`). */
  timeMs(): Promise<number>;
  /** The value of `key`, or null when absent. */
  get(key: string): Promise<string | null>;
  /**
   * Atomically: if the value of `key` is `expected` (null: absent), set it to `value` for `ttlMs` (a whole number
   * ≥ 1), or delete it when `value` is null, and answer `{ ok: true }`; otherwise change nothing and answer
   * `{ ok: false, current }` with the value found (null when absent).
   */
  compareAndSet(
    key: string,
    expected: string | null,
    value: string | null,
    ttlMs: number,
  ): Promise<{ ok: true } | { ok: false; current: string | null }>;
  /** Set `key` to `value` for `ttlMs` (a whole number ≥ 1). */
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/** A `SharedLimiter`'s config: a `Limiter`'s, and the store the fleet shares. */
export interface SharedLimiterConfig extends LimiterConfig {
  /** The store every process of the fleet uses (the same one, with the same prefix). */
  store: SharedStore;
  /** How many processes share the store: while it is out of reach, each paces on its own at `1 / fleetSize` of the policy. */
  fleetSize: number;
  /**
   * What a call does when the store fails (an error, or no answer within `storeTimeoutMs`): `"local"` (the
   * default) paces this process on its own at its share of the policy until the store answers again (it is asked
   * again after a second); `"wait"` holds the call until the store answers, at most `storeWaitMs` (and the call's
   * `timeoutMs`), then rejects with a `StoreError`. Either way a `release` is not held: the permit is given back to
   * the fleet once the store answers again.
   */
  onStoreError?: 'local' | 'wait';
  /** The bound on every call to the store, in milliseconds (default 1000). */
  storeTimeoutMs?: number;
  /** With `onStoreError: "wait"`, how long a call waits for the store at most, in milliseconds (default 60000). */
  storeWaitMs?: number;
  /**
   * Told of each store fault the limiter rode out: a call that failed or timed out (an `Error` named
   * `StoreError`), a record that could not be read and was rebuilt (`HostRecordUnreadable`).
   */
  onStoreWarning?: (error: Error) => void;
}

/**
 * The per-call options `acquire`, `visit`, `depart`, `observe` and `observeFailure` take: a signal bounds a wait
 * for the store.
 */
export interface StoreCallOptions {
  signal?: AbortSignal;
}

/**
 * `Limiter`'s shape for a fleet of processes sharing one politeness budget per host through a store (Redis,
 * Valkey): in the target's access log they look like one polite crawler. Each decision reads the host's record,
 * decides in the core and writes it back with a compare-and-set (one round trip when uncontended); instants come
 * from the store's clock. Every method about a host answers a promise; `nowMs`-style arguments are not accepted
 * (a `TypeError`). A failing store rejects with an `Error` named `StoreError` only with `onStoreError: "wait"`.
 */
export declare class SharedLimiter {
  constructor(config: SharedLimiterConfig);
  /** Free the core's memory now. */
  free(): void;
  /** Warnings about the config. */
  readonly warnings: string[];
  /** The crawler's User-Agent. */
  readonly userAgent: string;
  /** Processes sharing the store, as configured. */
  readonly fleetSize: number;
  /**
   * Hosts this process keeps an entry for: a record it wrote, a call under way, or what it learned on its own to
   * hand over. One whose record has expired since is let go as hosts are added.
   */
  readonly hostsKept: number;
  /** Milliseconds the store's clock is ahead of this process's (`undefined` before the first call measured it). */
  readonly clockOffsetMs: number | undefined;
  /** Reserve a departure to `url`'s host in the fleet's budget (see `Limiter.acquire`). */
  acquire(url: UrlLike, nowMs?: undefined, options?: StoreCallOptions): Promise<Decision>;
  /** When a request to `url`'s host could go, by this process's latest copy of the host's shared state. */
  peek(url: UrlLike, nowMs?: undefined): Decision;
  /** The next step of a visit to `url` (see `Limiter.visit`). */
  visit(url: UrlLike, nowMs?: undefined, maxWaitMs?: number, options?: StoreCallOptions): Promise<Turn>;
  /** Confirm a reserved departure (see `Limiter.depart`). */
  depart(url: UrlLike, departsMs?: number, options?: StoreCallOptions): Promise<Departure>;
  /** A request confirmed by `depart` was written only at `atMs` (default now), on this process's clock. */
  sent(url: UrlLike, atMs?: number): Promise<void>;
  /** Give back a concurrency permit (see `Limiter.release`). */
  release(url: UrlLike, permitId: number): Promise<void>;
  /** Learn from a response (see `Limiter.observe`). */
  observe(
    url: UrlLike,
    response: ResponseLike,
    latencyMs?: number,
    nowMs?: undefined,
    options?: StoreCallOptions,
  ): Promise<Observation>;
  /** Learn that a request got no response. */
  observeFailure(url: UrlLike, options?: StoreCallOptions): Promise<void>;
  /** What to do after attempt `attempts` answered `status`. */
  retryVerdict(status: number, attempts: number): 'done' | 'retry' | 'giveUp';
  /** A fetch of `host`'s robots.txt answered (see `Limiter.robotsFetched`). */
  robotsFetched(
    host: UrlLike,
    status: number,
    robotsTxt?: string,
    userAgent?: string,
    nowMs?: undefined,
    fetch?: number,
  ): Promise<RobotsOutcome | undefined>;
  /** A host's state and counters in the fleet's shared state. */
  stats(host: UrlLike, nowMs?: undefined): Promise<HostStats | undefined>;
  /** Wait for the host's turn in the fleet, run `task`, learn from its result (see `Limiter.schedule`). */
  schedule<T>(url: UrlLike, task: () => T | PromiseLike<T>, options?: ScheduleOptions): Promise<T>;
  /** A polite `fetch` paced by the fleet's shared budget (see `Limiter.fetch`). */
  fetch(url: UrlLike, init?: RequestInit & FetchOptions): Promise<Response & { hostpaceAttempts: number }>;
}
