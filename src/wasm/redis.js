// A shared store on Redis or Valkey (`hostpace/redis`): `redisStore(client)` makes, of an ioredis, iovalkey or
// node-redis client, the store a fleet of limiters shares one budget per host through: the store's clock (TIME),
// GET, SET with an expiry, and a compare-and-set that is one short Lua script on one key.
//
// Plain JavaScript with no import of any client: the package gains no dependency, and the client is the user's,
// used as it is (nothing is set on it). Commands go through the client's generic command call, so that every
// major version of each client is driven the same way:
//
//   ioredis 5 and 6, iovalkey (and their Cluster)   client.call(command, ...args)
//   node-redis 4, 5 and 6 (`redis`, `@redis/client`) client.sendCommand([command, ...args])
//   node-redis cluster (createCluster)               cluster.sendCommand(key, isReadonly, [command, ...args])
//
// Every reply is checked before it is used (RESP2 and RESP3, strings or Buffers), and every call has a deadline:
// what the server or the client answers otherwise, or not at all, becomes a `StoreError`.

import { Deadlines } from './deadlines.js';

/**
 * The compare-and-set: one key (KEYS[1]), so it runs on Redis 6 and later, Valkey, Redis Cluster and stores that
 * allow only declared keys. ARGV: [1] '1' when a value is expected ('0': the key must be absent), [2] that value,
 * [3] '1' to set ('0': delete), [4] the new value, [5] its expiry in milliseconds. The reply is an array in every
 * case, so that no reply of one protocol reads as another's: {1} done, {0, 0} not done (absent), {0, 1, value} not
 * done (found). GET answers false for an absent key, which equals the expectation of absence (false). A key of
 * another type (a list, a hash) reads as FOREIGN and its type, which no string written here is: expected as such,
 * it is written over.
 */
const CAS_SCRIPT = `local current = redis.pcall('GET', KEYS[1])
if type(current) == 'table' then current = '\\0' .. redis.call('TYPE', KEYS[1]).ok end
if current ~= (ARGV[1] == '1' and ARGV[2]) then
  if current then return {0, 1, current} end
  return {0, 0}
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
else
  redis.call('DEL', KEYS[1])
end
return {1}`;

/** SHA-1 of CAS_SCRIPT, the name EVALSHA runs it by (tests/js/redis-store.test.mjs checks it against the text). */
const CAS_SHA = 'a91bc75243358221e84dbfa74b80594aec3fe99b';

/**
 * What a key holding another type than a string reads as: this prefix and the type's name (`\0list`). A value
 * written by a limiter never starts with it, so it reads as a record that is not one (and is written over).
 */
const FOREIGN = '\0';

/** The longest delay a timer takes (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A store call that failed: no answer within the timeout, an error from the client or the server, or a reply that
 * is not what the command answers. `operation` is the store method, `key` the key as stored (prefix included;
 * null for `timeMs`), `cause` the client's error when there was one. A call that timed out or failed may still
 * have been carried out by the server.
 */
export class StoreError extends Error {
  constructor(operation, key, message, cause) {
    const what = key === null ? operation : `${operation} of key ${JSON.stringify(key)}`;
    super(`${what}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = 'StoreError';
    this.operation = operation;
    this.key = key;
  }
}

/** A short description of a value that came as a reply: its kind, and what it holds when that is short. */
function describe(reply) {
  if (reply === null) return 'null';
  if (reply === undefined) return 'undefined';
  if (typeof reply === 'string') {
    return `a string (${JSON.stringify(reply.length > 40 ? `${reply.slice(0, 40)}…` : reply)})`;
  }
  if (typeof reply === 'number' || typeof reply === 'bigint' || typeof reply === 'boolean') {
    return `a ${typeof reply} (${String(reply)})`;
  }
  if (reply instanceof Uint8Array) return `${reply.length} bytes`;
  if (Array.isArray(reply)) return `an array of ${reply.length} (${reply.map((r) => kind(r)).join(', ')})`;
  if (reply instanceof Error) return `an error (${reply.message})`;
  return kind(reply);
}

/** The kind of a value, for messages: 'null', 'an array', 'a string', 'an object', … */
function kind(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'bytes';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const decoder = new TextDecoder();

/** A bulk string reply (a string, or a Buffer or other bytes) as a string; undefined for anything else. */
function text(reply) {
  if (typeof reply === 'string') return reply;
  if (reply instanceof Uint8Array) return decoder.decode(reply);
  return undefined;
}

/** An integer reply (a number, a bigint, or its digits as text: ioredis `stringNumbers`); else undefined. */
function integer(reply) {
  if (typeof reply === 'number') return Number.isSafeInteger(reply) ? reply : undefined;
  if (typeof reply === 'bigint') return Number(reply);
  const digits = text(reply);
  return digits !== undefined && /^-?\d{1,15}$/.test(digits) ? Number(digits) : undefined;
}

/** The error of a key that is not a string. */
function keyError(operation, key) {
  return new TypeError(`${operation}: key must be a string, got ${kind(key)}`);
}

/** The error of a compare-and-set's `expected` or `value` that is neither a string nor null. */
function casArgError(name, arg) {
  return new TypeError(`compareAndSet: ${name} must be a string or null, got ${kind(arg)}`);
}

/** The error of an expiry that is not a whole number of milliseconds ≥ 1; undefined for a good one. */
function ttlError(operation, ttlMs) {
  if (typeof ttlMs !== 'number') return new TypeError(`${operation}: ttlMs must be a number, got ${kind(ttlMs)}`);
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    return new RangeError(`${operation}: ttlMs must be a whole number of milliseconds ≥ 1, got ${ttlMs}`);
  }
  return undefined;
}

/** TIME's reply as milliseconds since the epoch (microseconds kept as the fraction). */
function readTime(reply) {
  const expected = '[seconds, microseconds]';
  if (!Array.isArray(reply) || reply.length !== 2) throw garbage('timeMs', null, 'TIME', reply, expected);
  const seconds = integer(reply[0]);
  const micros = integer(reply[1]);
  if (seconds === undefined || micros === undefined || seconds < 0 || micros < 0 || micros > 999_999) {
    throw garbage('timeMs', null, 'TIME', reply, expected);
  }
  return seconds * 1000 + micros / 1000;
}

/** The error of a reply that is not what `command` answers (`expected`). */
function garbage(operation, key, command, reply, expected) {
  return new StoreError(operation, key, `${command} answered ${describe(reply)}, not ${expected}`);
}

/** How a client's commands are sent: `(args, key) => Promise`, args all strings, key the one to route by. */
function commandSender(client) {
  if (client === null || typeof client !== 'object') {
    throw new TypeError(
      'redisStore: client must be an ioredis or iovalkey client (with a call method) or a node-redis client ' +
        `(with a sendCommand method), got ${describe(client)}`,
    );
  }
  if (typeof client.call === 'function') {
    // ioredis, iovalkey: Redis and Cluster alike (a Cluster routes by the key it finds in the command)
    return (args) => client.call(...args);
  }
  if (typeof client.sendCommand === 'function') {
    if (typeof client.getSlotMaster === 'function') {
      // node-redis cluster: routed by the key given first; a command without key goes to any node
      return (args, key) => client.sendCommand(key, false, args);
    }
    return (args) => client.sendCommand(args);
  }
  throw new TypeError(
    'redisStore: client has neither a call method (ioredis, iovalkey) nor a sendCommand method (node-redis)',
  );
}

/**
 * A `SharedStore` on a Redis or Valkey client: ioredis (5, 6), iovalkey, node-redis (`redis` 4, 5, 6), their
 * cluster clients too. `prefix` (default 'hp:') is put before every key; each call fails with a `StoreError` after
 * `timeoutMs` (default 1000) without an answer.
 */
export function redisStore(client, options = {}) {
  const send = commandSender(client);
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`redisStore: options must be an object, got ${kind(options)}`);
  }
  const { prefix = 'hp:', timeoutMs = 1000 } = options;
  if (typeof prefix !== 'string') {
    throw new TypeError(`redisStore: options.prefix must be a string, got ${kind(prefix)}`);
  }
  if (typeof timeoutMs !== 'number') {
    throw new TypeError(`redisStore: options.timeoutMs must be a number, got ${kind(timeoutMs)}`);
  }
  if (!(timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new RangeError(
      `redisStore: options.timeoutMs must be a number of milliseconds > 0 and ≤ ${MAX_TIMEOUT_MS}, got ${timeoutMs}`,
    );
  }

  const deadlines = new Deadlines(timeoutMs);

  /**
   * Send `args` (routed by `key`, the key as stored) for `operation` within the deadline, and answer what
   * `read(reply)` makes of the reply; any failure becomes a StoreError of `operation` on `key`. `retry(error)`, when
   * given, may send again after an error (`args` to send, or undefined): only while the call is still waited for
   * (once it timed out, nothing more is sent for it).
   */
  function call(operation, key, args, read, retry) {
    return new Promise((resolve, reject) => {
      const token = deadlines.start(() => {
        reject(new StoreError(operation, key, `no answer from the store within ${timeoutMs} ms (timeoutMs)`));
      });
      const fail = (error) => {
        if (!deadlines.settle(token)) return;
        if (error instanceof StoreError) return reject(error);
        const said = error instanceof Error ? error.message : describe(error);
        reject(new StoreError(operation, key, `the store failed: ${said}`, error));
      };
      const answer = (reply) => {
        let value;
        try {
          value = read(reply);
        } catch (error) {
          return fail(error);
        }
        if (deadlines.settle(token)) resolve(value);
      };
      const sent = (command, onError) => {
        try {
          Promise.resolve(send(command, key ?? undefined)).then(answer, onError);
        } catch (error) {
          fail(error);
        }
      };
      sent(args, retry === undefined ? fail : (error) => {
        const again = deadlines.waits(token) ? retry(error) : undefined;
        if (again === undefined) return fail(error);
        sent(again, fail);
      });
    });
  }

  return {
    timeMs() {
      return call('timeMs', null, ['TIME'], readTime);
    },

    get(key) {
      if (typeof key !== 'string') return Promise.reject(keyError('get', key));
      const stored = prefix + key;
      // a key of another type: its TYPE is asked, and it reads as FOREIGN and the type's name
      let foreign = false;
      const retry = (error) => {
        if (!String(error?.message).startsWith('WRONGTYPE')) return undefined;
        foreign = true;
        return ['TYPE', stored];
      };
      const read = (reply) => {
        if (reply === null && !foreign) return null;
        const value = text(reply);
        if (value === undefined) throw garbage('get', stored, foreign ? 'TYPE' : 'GET', reply, 'a string or null');
        return foreign ? FOREIGN + value : value;
      };
      return call('get', stored, ['GET', stored], read, retry);
    },

    compareAndSet(key, expected, value, ttlMs) {
      const invalid =
        (typeof key !== 'string' && keyError('compareAndSet', key)) ||
        (expected !== null && typeof expected !== 'string' && casArgError('expected', expected)) ||
        (value !== null && typeof value !== 'string' && casArgError('value', value)) ||
        ttlError('compareAndSet', ttlMs);
      if (invalid) return Promise.reject(invalid);
      const stored = prefix + key;
      const args = [
        'EVALSHA',
        CAS_SHA,
        '1',
        stored,
        expected === null ? '0' : '1',
        expected ?? '',
        value === null ? '0' : '1',
        value ?? '',
        String(ttlMs),
      ];
      const read = (reply) => {
        const shape = '[1], [0, 0] or [0, 1, value] (the compare-and-set script)';
        if (!Array.isArray(reply)) throw garbage('compareAndSet', stored, 'the script', reply, shape);
        const [done, found] = reply.map(integer);
        if (done === 1 && reply.length === 1) return { ok: true };
        if (done === 0 && found === 0 && reply.length === 2) return { ok: false, current: null };
        const current = text(reply[2]);
        if (done === 0 && found === 1 && reply.length === 3 && current !== undefined) return { ok: false, current };
        throw garbage('compareAndSet', stored, 'the script', reply, shape);
      };
      // the server's script cache does not hold it (a restart, SCRIPT FLUSH, another node): EVAL loads it, unless
      // the call has timed out meanwhile (its caller was told it failed: nothing more is done for it)
      const retry = (error) => {
        if (!String(error?.message).startsWith('NOSCRIPT')) return undefined;
        args[0] = 'EVAL';
        args[1] = CAS_SCRIPT;
        return args;
      };
      return call('compareAndSet', stored, args, read, retry);
    },

    set(key, value, ttlMs) {
      const invalid =
        (typeof key !== 'string' && keyError('set', key)) ||
        (typeof value !== 'string' && new TypeError(`set: value must be a string, got ${kind(value)}`)) ||
        ttlError('set', ttlMs);
      if (invalid) return Promise.reject(invalid);
      const stored = prefix + key;
      return call('set', stored, ['SET', stored, value, 'PX', String(ttlMs)], (reply) => {
        if (text(reply) !== 'OK') throw garbage('set', stored, 'SET', reply, '"OK"');
      });
    },
  };
}
