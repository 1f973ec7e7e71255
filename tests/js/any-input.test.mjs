// No input traps the module: every exported function, constructor, method and getter of the package is called
// with random JS values (and random numbers of them). After each call, nothing may have thrown a
// WebAssembly.RuntimeError (a trap) or anything that is not an Error, and the Limiter that took the calls must
// still answer, for a host the calls never name, exactly what an untouched twin answers.
//
// HOSTPACE_ANY_INPUT_CALLS sets the number of calls (100,000 here; see FUZZING.md for longer runs), and
// HOSTPACE_ANY_INPUT_START the pseudo-random sequence's start value (printed on failure, to replay it).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import * as hostpace from '../../pkg/node.js';
import { memoryStore } from './memory-store.mjs';

const CALLS = Number(process.env.HOSTPACE_ANY_INPUT_CALLS ?? 100_000);
const START = Number(process.env.HOSTPACE_ANY_INPUT_START ?? 20261201);

/** mulberry32: a small, fast pseudo-random sequence in [0, 1). */
function sequence(start) {
  let a = start >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MB = 'a'.repeat(1 << 20);
const MB_URL = `https://mb.test/${MB}`;
const hostile = new Proxy(
  {},
  {
    get() {
      throw new Error('hostile get');
    },
    ownKeys() {
      throw new Error('hostile ownKeys');
    },
    getPrototypeOf() {
      throw new Error('hostile prototype');
    },
    has() {
      throw new Error('hostile has');
    },
  },
);
const revoked = Proxy.revocable({}, {});
revoked.revoke();
const boom = () => {
  throw new Error('a getter that throws');
};
// throws an Error whose own `message` throws when read
const unreadable = () => {
  throw Object.defineProperty(new Error(), 'message', { get: boom });
};
class NumberHref extends URL {
  get href() {
    return 42;
  }
}
class ThrowingHref extends URL {
  get href() {
    return boom();
  }
}
class LyingF64 extends Float64Array {
  get length() {
    return 5000;
  }
}
class LyingU32 extends Uint32Array {
  get length() {
    return 1 << 30;
  }
}

/** Values of every kind a careless or hostile caller might pass. */
function values(rand) {
  const int = (n) => Math.floor(rand() * n);
  const fixed = [
    undefined, null, true, false,
    0, -0, 1, -1, 0.5, 7, 250, 1000, 1e6, 1.7e12, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), 1e21, 1e300,
    Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity,
    10n, -10n, 2n ** 64n,
    '', 'a', '0', '12', 'example.com', 'EXAMPLE.com.:80', 'https://example.com/', 'http://user:pw@x.test/',
    'ftp://x.test/', 'http://[::1]:8080/', 'https://xn--bcher-kva.example/', '\uD800', 'http://a\uDC00.test/',
    '\u0000', 'x\u0000y', 'http://a\u0000b.test/', 'User-agent: *\nCrawl-delay: 2\n', MB, MB_URL,
    {}, [], [1, 2], [['retry-after', '1']], [[1, 2, 3]], Object.create(null), { length: 3 },
    { status: 200 }, { status: 429, headers: { 'retry-after': '1' } }, { status: 503, headers: [['Retry-After', 'soon']] },
    { status: 'x' }, { status: 200, headers: 5 }, { status: 200, headers: { a: Symbol('s') } }, { status: 42 },
    { ratePerSec: 2, burstCapacity: 4 }, { ratePerSec: 'fast' }, { quota: { limit: 2 } }, { nope: 1 },
    { adaptive: { steps: 2 }, maxConcurrency: 2 }, { signal: AbortSignal.abort() },
    Symbol('s'), Symbol.iterator,
    new URL('https://u.test/p?q'), new URL('ftp://u.test/'),
    () => 1, async () => new Response('ok'), () => { throw new Error('task failed'); }, function named() {},
    Uint32Array.of(0, 1, 2), Uint32Array.of(4294967295), Float64Array.of(0, NaN), new Float64Array(4),
    Float32Array.of(1), new ArrayBuffer(8), new Headers({ 'retry-after': '2' }),
    new Response('x', { status: 503, headers: { 'retry-after': 'garbage' } }), new Map([['a', 'b']]),
    new Date(0), /re/, new Error('e'), hostile, revoked.proxy,
    { get ratePerSec() { return boom(); } }, { get quota() { return boom(); } }, { quota: { get limit() { return boom(); } } },
    new NumberHref('https://n.test/'), new ThrowingHref('https://t.test/'), LyingF64.of(0, 1), LyingU32.of(0),
    { signal: { aborted: false } }, () => ({ get status() { return boom(); } }),
  ];
  return () => {
    const pick = rand();
    if (pick < 0.15) return `http://h${int(1000)}.test/p${int(10)}`;
    // earlier than the clock (which the fixed host's decisions use), or refused (negative)
    if (pick < 0.2) return rand() * 2 ** int(40) * (rand() < 0.1 ? -1 : 1);
    if (pick < 0.22) return String.fromCharCode(...Array.from({ length: int(20) }, () => int(0x10000)));
    return fixed[int(fixed.length)];
  };
}

/** Every callable thing of the package: [label, call(args)] pairs, given the instances they are called on. */
function surface(instances) {
  const out = [];
  for (const [name, value] of Object.entries(hostpace)) {
    if (typeof value !== 'function') continue;
    const proto = value.prototype;
    const isClass = proto && Object.getOwnPropertyNames(proto).some((k) => k !== 'constructor');
    if (!isClass) {
      out.push([`${name}()`, (args) => value(...args)]);
      continue;
    }
    out.push([`new ${name}()`, (args) => new value(...args)]);
    for (const key of Object.getOwnPropertyNames(value)) {
      if (['length', 'name', 'prototype', '__wrap'].includes(key) || typeof value[key] !== 'function') continue;
      out.push([`${name}.${key}()`, (args) => value[key](...args)]);
    }
    const instance = instances[name];
    if (!instance) continue;
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (['constructor', 'free', '__destroy_into_raw'].includes(key)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      if (descriptor.get) out.push([`${name}#${key}`, () => instance[key]]);
      else if (typeof descriptor.value === 'function') out.push([`${name}#${key}()`, (args) => instance[key](...args)]);
    }
  }
  return out;
}

const isError = (e) => e instanceof Error && !(e instanceof WebAssembly.RuntimeError);

test(`${CALLS} calls with random JS values: no trap, no state lost`, async () => {
  const { Limiter, Frontier, TokenBucket, LeakyBucket, SlidingWindow, HostLimiter, GatewayLimiter, SharedLimiter } =
    hostpace;
  // short waits, cooldowns and robots.txt fetches (one a random `visit` hands out is never reported, and holds
  // its host's other calls until it times out): the schedule and fetch calls among the random ones settle in
  // seconds
  const config = {
    ratePerSec: 20,
    burstCapacity: 4,
    minIntervalSec: 0.01,
    maxBackoffSec: 1,
    defaultRetryAfterSec: 1,
    robotsTimeoutSec: 1,
  };
  const limiter = new Limiter(config);
  const twin = new Limiter(config);
  const gatewayFetch = async () => new Response('{"error":{"code":"refused","message":"test"}}', { status: 400 });
  const instances = {
    Limiter: limiter,
    Frontier: new Frontier(limiter),
    TokenBucket: new TokenBucket(2, 4),
    LeakyBucket: new LeakyBucket(100),
    SlidingWindow: new SlidingWindow(3, 1000),
    HostLimiter: new HostLimiter(config),
    GatewayLimiter: new GatewayLimiter('http://127.0.0.1:9', 'token', { fetch: gatewayFetch }),
    SharedLimiter: new SharedLimiter({ ...config, store: memoryStore(), fleetSize: 2 }),
  };
  // the fixed host's id must not be one a random call can name (ids are small integers in interning order)
  for (let i = 0; i < 5000; i++) limiter.intern(`http://decoy${i}.test/`);
  const calls = surface(instances);
  const names = new Set(calls.map(([label]) => label));
  for (const expected of ['Limiter#acquire()', 'Limiter#observe()', 'Limiter#schedule()', 'Limiter#fetch()',
    'Limiter.restore()', 'Frontier#push()', 'HostLimiter#throttle()', 'audit()', 'new Limiter()', 'Limiter#warnings',
    'Limiter#setPolicy()', 'Limiter#block()', 'Limiter#unblock()', 'Limiter#rules()']) {
    assert.ok(names.has(expected), `${expected} is called`);
  }

  const realFetch = globalThis.fetch;
  globalThis.fetch = async () => new Response('stub');
  const rand = sequence(START);
  const value = values(rand);
  const FIXED = 'https://twin.fixed.test/page';
  const pending = [];
  const counts = new Map();
  try {
    for (let i = 0; i < CALLS; i++) {
      const [label, call] = calls[Math.floor(rand() * calls.length)];
      const args = Array.from({ length: Math.floor(rand() * 5) }, value);
      counts.set(label, (counts.get(label) ?? 0) + 1);
      const shown = () => {
        try {
          return inspect(args, { depth: 1, maxStringLength: 40 }).slice(1, -1);
        } catch (_) {
          return '(arguments that cannot be shown)';
        }
      };
      const where = () => `call ${i} ${label}(${shown()}) (start ${START})`;
      try {
        const result = call(args);
        // the methods that hand their errors back as values (src/wasm/mod.rs, `answer`) throw them in the JS half
        if (isError(result)) assert.fail(`${where()} answered an error instead of throwing it: ${result}`);
        if (result && typeof result.then === 'function') {
          pending.push(Promise.resolve(result).then(
            () => undefined,
            (e) => {
              if (!isError(e)) assert.fail(`${where()} rejected with ${e}`);
            },
          ));
        }
      } catch (e) {
        if (!isError(e)) assert.fail(`${where()} threw ${e instanceof WebAssembly.RuntimeError ? 'a trap: ' : ''}${e}`);
      }
      // one clock reading for both: the random calls pass instants earlier than the clock, or none
      const now = hostpace.nowMs();
      const [mine, theirs] = [limiter.acquire(FIXED, now), twin.acquire(FIXED, now)];
      if (JSON.stringify(mine) !== JSON.stringify(theirs)) assert.deepEqual(mine, theirs, `${where()}: the fixed host`);
    }
    let timer;
    const settled = await Promise.race([
      Promise.allSettled(pending),
      new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), 60_000))),
    ]);
    clearTimeout(timer);
    assert.notEqual(settled, 'timeout', 'every schedule/fetch settles');
    for (const s of settled) assert.equal(s.status, 'fulfilled', String(s.reason));
  } finally {
    globalThis.fetch = realFetch;
  }
  const end = hostpace.nowMs();
  assert.deepEqual(limiter.stats('twin.fixed.test', end), twin.stats('twin.fixed.test', end), 'the fixed host at the end');
  const untouched = [...names].filter((label) => !counts.has(label));
  assert.deepEqual(untouched, [], 'every entry point was called');
  console.log(`${CALLS} calls over ${names.size} entry points; ${pending.length} promises settled`);
});

test('exceptions thrown by the caller\'s own code, repeated, leave the module working', () => {
  const { Limiter, Frontier, audit } = hostpace;
  const limiter = new Limiter({ ratePerSec: 2, burstCapacity: 1 });
  const frontier = new Frontier(limiter);
  const throwing = [
    () => new Limiter({ get ratePerSec() { return boom(); } }),
    () => new Limiter({ quota: { get limit() { return boom(); } } }),
    () => audit({ get burstCapacity() { return boom(); } }, [0]),
    () => audit({ get burstCapacity() { return unreadable(); } }, [0]),
    () => audit(undefined, [0], [{ get startMs() { return boom(); }, endMs: 1 }]),
    () => audit(undefined, [0], [{ startMs: 0, get endMs() { return unreadable(); } }]),
    () => limiter.stats(new ThrowingHref('https://t.test/')),
    () => limiter.observe(new ThrowingHref('https://t.test/'), { status: 200 }),
    () => limiter.observe('https://o.test/', { get status() { return boom(); } }),
    () => limiter.observe('https://o.test/', { status: 200, headers: hostile }),
    () => limiter.acquire(new NumberHref('https://n.test/')),
    () => frontier.push(new NumberHref('https://n.test/')),
    () => limiter.acquireIds(LyingU32.of(0)),
    () => limiter.acquireIds(Uint32Array.of(), null, new LyingF64(0)),
    () => audit(undefined, LyingF64.of(0, 1)),
  ];
  for (const call of throwing) {
    for (let i = 0; i < 3000; i++) {
      let result;
      try {
        result = call();
      } catch (e) {
        if (!isError(e)) assert.fail(`${call}: threw ${e}`);
      }
      if (isError(result)) assert.fail(`${call}: answered an error instead of throwing it: ${result}`);
    }
  }
  assert.deepEqual([0, 500].map(() => limiter.acquire('https://after.test/', 0).waitMs), [0, 500]);
});

test('arrays beyond what fits the engine\'s reference table are read without it', () => {
  const { Limiter, audit } = hostpace;
  const limiter = new Limiter({ ratePerSec: 2, burstCapacity: 1 });
  const log = Array.from({ length: 9_000_000 }, (_, i) => i * 1000);
  assert.deepEqual(audit({ ratePerSec: 1, burstCapacity: 1 }, log), []);
  const ids = new Array(1 << 24);
  assert.throws(() => limiter.acquireIds(ids), /invalid ids\[0\]: expected a number, got undefined/);
  assert.equal(limiter.acquire('https://after.test/', 0).waitMs, 0);
});
