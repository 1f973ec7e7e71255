// Types of `hostpace/redis` (src/wasm/redis.js), copied into the npm package by scripts/build-pkg.sh. No client's
// own types are imported (the package does not depend on any): a client is described by the one member used.

import type { SharedStore } from './shared-limiter.js';

/** What `SharedLimiter` needs of a shared store (declared with `SharedLimiter`); `redisStore` makes one. */
export type { SharedStore };

/** An ioredis (5, 6) or iovalkey client, or their `Cluster`: its generic command call. */
export interface IoredisLikeClient {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** A node-redis client (`redis` 4, 5, 6 or `@redis/client`, `createClient`): its generic command call. */
export interface NodeRedisLikeClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** A node-redis cluster (`createCluster`): its generic command call, routed by `firstKey`, and `getSlotMaster`. */
export interface NodeRedisLikeCluster {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
}

/** Options of `redisStore`. */
export interface RedisStoreOptions {
  /** Put before every key (default `'hp:'`). */
  prefix?: string;
  /** How long each store call may take before it fails with a `StoreError`, in milliseconds (default 1000). */
  timeoutMs?: number;
}

/**
 * A `SharedStore` on a Redis or Valkey client (ioredis 5 or 6, iovalkey, node-redis 4, 5 or 6; RESP2 or RESP3).
 * The kind of client is told by its methods: `call` (ioredis, iovalkey), `sendCommand` (node-redis) and with it
 * `getSlotMaster` (a node-redis cluster). Each call sends one command on one key, the compare-and-set a Lua script
 * (EVALSHA, EVAL when the server's script cache lacks it), so a cluster needs nothing more.
 *
 * Every call fails with a `StoreError` after `timeoutMs` without an answer, when the client or the server answers
 * an error, or when the reply is not what the command answers. Create the client with `enableOfflineQueue: false`
 * (ioredis, iovalkey; and `autoResendUnfulfilledCommands: false`) or `disableOfflineQueue: true` (node-redis):
 * then a call made while the store is unreachable fails at once, instead of waiting in the client's queue and
 * being carried out later, after its caller was told it failed. The client is used as it is; nothing is set on it.
 *
 * Throws a `TypeError` when `client` has neither a `call` nor a `sendCommand` method, or an option has the wrong
 * type, and a `RangeError` when `timeoutMs` is not > 0 and ≤ 2^31 - 1. A store method given an argument of the
 * wrong type or range rejects with a `TypeError` or `RangeError` naming it, and sends nothing.
 */
export function redisStore(
  client: IoredisLikeClient | NodeRedisLikeClient | NodeRedisLikeCluster,
  options?: RedisStoreOptions,
): SharedStore;

/**
 * A store call that failed: no answer within `timeoutMs`, an error from the client or the server (`cause`), or a
 * reply that is not what the command answers. The message names the operation, the key and what went wrong. A call
 * that timed out or failed may still have been carried out by the server.
 */
export class StoreError extends Error {
  /** Always `'StoreError'`. */
  readonly name: 'StoreError';
  /** The store method: `'timeMs'`, `'get'`, `'compareAndSet'` or `'set'`. */
  readonly operation: 'timeMs' | 'get' | 'compareAndSet' | 'set';
  /** The key as stored (prefix included); null for `timeMs`. */
  readonly key: string | null;
}
