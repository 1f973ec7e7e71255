// `hostpace/redis` against a real redis-server (Debian's, started on 127.0.0.1 by tests/support/redis.mjs), through
// every client it supports: ioredis 5 and 6, iovalkey, node-redis 4, 5 and 6, over RESP2 and RESP3 (each
// connection's protocol is read back from the server with CLIENT INFO, not assumed). What the store answers is
// checked against what the server holds (GET, PTTL, EXISTS sent by the same client). The store is taken down and
// brought back; the cluster clients run on a Redis Cluster of three masters; and clients that answer garbage, hang
// or are not clients at all are checked without a server.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Cluster as Ioredis5Cluster, Redis as Ioredis5 } from 'ioredis5';
import { Cluster as Ioredis6Cluster, Redis as Ioredis6 } from 'ioredis6';
import { Cluster as IovalkeyCluster, Redis as Iovalkey } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { StoreError, redisStore } from '../../pkg/redis.js';
import { SharedLimiter } from '../../pkg/node.js';
import { startRedis, startRedisCluster } from '../support/redis.mjs';
import { TOL, sleep, until, within } from './helpers.mjs';

/** Each store call's deadline in these tests, and how late past it a rejection may come on a busy machine. */
const TIMEOUT_MS = 300;
const SLACK_MS = 100 + TOL;

let server;
before(async () => {
  server = await startRedis();
});
after(() => server?.stop());

const ignore = () => {};

/**
 * Connect `client` to 127.0.0.1:`port` within 10 s, else close it and throw: a client that retries for ever when
 * the server is not there must fail the test, not hang it.
 */
async function connected(client, port, close) {
  try {
    await within(client.connect(), 10_000, `no connection to 127.0.0.1:${port} within 10 s`);
    return client;
  } catch (error) {
    await close(client);
    throw error;
  }
}

/** Close an ioredis or iovalkey client, connected or not. */
const closeIoredis = (client) => client.disconnect();
/** Close a node-redis client, connected or not (`destroy` from node-redis 5, `disconnect` before). */
async function closeNodeRedis(client) {
  if (typeof client.destroy === 'function') client.destroy();
  else await client.disconnect().catch(ignore);
}

/** An ioredis-style client (ioredis, iovalkey) on `port`; `safe`: with the offline queue and resends off. */
function ioredisKind(Client, extra = {}) {
  return {
    async open(port, safe) {
      const client = new Client(port, '127.0.0.1', {
        lazyConnect: true,
        ...(safe ? { enableOfflineQueue: false, autoResendUnfulfilledCommands: false } : {}),
        ...extra,
      });
      client.on('error', ignore); // reconnection attempts while the server is down
      return connected(client, port, closeIoredis);
    },
    raw: (client, ...args) => client.call(...args),
    ready: (client) => client.status === 'ready',
    close: closeIoredis,
  };
}

/** A node-redis client on `port`; `safe`: with the offline queue off. */
function nodeRedisKind(createClient, extra = {}) {
  return {
    async open(port, safe) {
      const client = createClient({
        socket: { host: '127.0.0.1', port },
        ...(safe ? { disableOfflineQueue: true } : {}),
        ...extra,
      });
      client.on('error', ignore); // reconnection attempts while the server is down
      return connected(client, port, closeNodeRedis);
    },
    raw: (client, ...args) => client.sendCommand(args),
    ready: (client) => client.isReady,
    close: closeNodeRedis,
  };
}

const CLIENTS = [
  { name: 'ioredis 5', resp: 2, ...ioredisKind(Ioredis5) },
  { name: 'ioredis 6 (RESP3, its default)', resp: 3, ...ioredisKind(Ioredis6) },
  { name: 'ioredis 6, protocol: 2', resp: 2, ...ioredisKind(Ioredis6, { protocol: 2 }) },
  { name: 'iovalkey', resp: 2, ...ioredisKind(Iovalkey) },
  { name: 'node-redis 4', resp: 2, ...nodeRedisKind(createClient4) },
  { name: 'node-redis 5 (RESP2, its default)', resp: 2, ...nodeRedisKind(createClient5) },
  { name: 'node-redis 5, RESP: 3', resp: 3, ...nodeRedisKind(createClient5, { RESP: 3 }) },
  { name: 'node-redis 6 (RESP3, its default)', resp: 3, ...nodeRedisKind(createClient6) },
  { name: 'node-redis 6, RESP: 2', resp: 2, ...nodeRedisKind(createClient6, { RESP: 2 }) },
];

/** A bulk reply as a string (Buffers and RESP3 verbatim strings included). */
const str = (reply) => (reply === null ? null : String(reply));

/**
 * The client seen through a Proxy that records the commands the store sends (its `call` or `sendCommand`), each as
 * its arguments; everything else is the client's own.
 */
function recording(client) {
  const sent = [];
  const proxy = new Proxy(client, {
    get(target, name) {
      if (name === 'call' && typeof target.call === 'function') {
        return (...args) => (sent.push(args.map(String)), target.call(...args));
      }
      if (name === 'sendCommand' && typeof target.sendCommand === 'function') {
        return (args) => (sent.push(args.map(String)), target.sendCommand(args));
      }
      return Reflect.get(target, name, target);
    },
  });
  return { proxy, sent };
}

/** Time one call: `{ ms, error }`, error undefined when it resolved. */
async function timed(promise) {
  const start = performance.now();
  try {
    await promise;
    return { ms: performance.now() - start, error: undefined };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

/** Await, within 10 s, `check()` resolving without an error: the client reconnected after a restart. */
async function reconnected(check, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: still failing 10 s after the restart: ${error.message}`);
      await sleep(50);
    }
  }
}

for (const [index, kind] of CLIENTS.entries()) {
  describe(`redisStore with ${kind.name}`, () => {
    /** Offline queue off (how the docs say to create it), and the client's defaults. */
    let safe;
    let queued;
    let store;
    /** This client's keys (the prefix of the store included), so that no two clients share one. */
    const k = (name) => `c${index}:${name}`;
    const raw = (...args) => kind.raw(safe, ...args);

    before(async () => {
      safe = await kind.open(server.port, true);
      queued = await kind.open(server.port, false);
      store = redisStore(safe, { timeoutMs: TIMEOUT_MS });
    });
    after(async () => {
      if (safe) await kind.close(safe);
      if (queued) await kind.close(queued);
    });

    test('the connection speaks the protocol named', async () => {
      const info = str(await raw('CLIENT', 'INFO'));
      assert.equal(Number(/ resp=(\d)/.exec(info)?.[1]), kind.resp, info);
    });

    test('timeMs is the server clock, which here is this machine clock', async () => {
      const before = Date.now();
      const ms = await store.timeMs();
      const after = Date.now();
      assert.equal(typeof ms, 'number');
      assert.ok(Number.isFinite(ms) && ms >= before - 1 && ms <= after + 1, `${before} ≤ ${ms} ≤ ${after}`);
      // microseconds are kept: of five readings, one at least has a fraction of a millisecond (each has one 999
      // times in 1000)
      const readings = [ms];
      for (let i = 0; i < 4; i++) readings.push(await store.timeMs());
      assert.ok(readings.some((t) => t % 1 !== 0), `microseconds are kept: ${readings.join(', ')}`);
    });

    test('get and set: the prefix, values as given, the expiry', async () => {
      assert.equal(await store.get(k('plain')), null);
      assert.equal(await store.set(k('plain'), 'v1', 60_000), undefined);
      assert.equal(await store.get(k('plain')), 'v1');
      assert.equal(str(await raw('GET', `hp:${k('plain')}`)), 'v1', 'stored under the prefix hp:');
      assert.equal(Number(await raw('EXISTS', k('plain'))), 0, 'nothing stored without the prefix');
      const pttl = Number(await raw('PTTL', `hp:${k('plain')}`));
      assert.ok(pttl > 55_000 && pttl <= 60_000, `PTTL ${pttl}`);
      await store.set(k('plain'), 'v2', 5_000);
      assert.equal(await store.get(k('plain')), 'v2');
      const pttl2 = Number(await raw('PTTL', `hp:${k('plain')}`));
      assert.ok(pttl2 > 0 && pttl2 <= 5_000, `set replaces the expiry: PTTL ${pttl2}`);
      for (const value of ['', 'é ✓ 😀', 'a\r\nb', '{"t":1.5,"n":[1,2]}', '0', 'x'.repeat(10_000)]) {
        await store.set(k('plain'), value, 60_000);
        assert.equal(await store.get(k('plain')), value);
      }
      const other = redisStore(safe, { prefix: 'other/', timeoutMs: TIMEOUT_MS });
      await other.set(k('p'), 'o', 60_000);
      assert.equal(str(await raw('GET', `other/${k('p')}`)), 'o');
      assert.equal(await store.get(k('p')), null, 'another prefix, another key');
      const bare = redisStore(safe, { prefix: '' });
      assert.equal(await bare.get(`other/${k('p')}`), 'o', 'prefix "" adds nothing');
    });

    test('compareAndSet: absent, match, mismatch, delete, and the expiry it sets', async () => {
      const key = k('cas');
      const stored = `hp:${key}`;
      const pttl = async () => Number(await raw('PTTL', stored));
      const held = async () => str(await raw('GET', stored));
      assert.deepEqual(await store.compareAndSet(key, 'x', 'y', 1000), { ok: false, current: null }, 'absent ≠ "x"');
      assert.equal(Number(await raw('EXISTS', stored)), 0, 'a failed compareAndSet creates nothing');
      assert.deepEqual(await store.compareAndSet(key, null, 'a', 10_000), { ok: true }, 'absent → a');
      assert.equal(await held(), 'a');
      let left = await pttl();
      assert.ok(left > 9_000 && left <= 10_000, `PTTL ${left}`);
      assert.deepEqual(await store.compareAndSet(key, null, 'b', 10_000), { ok: false, current: 'a' }, 'a ≠ absent');
      assert.deepEqual(await store.compareAndSet(key, 'x', 'b', 10_000), { ok: false, current: 'a' }, 'a ≠ x');
      assert.deepEqual(await store.compareAndSet(key, 'a ', 'b', 10_000), { ok: false, current: 'a' }, 'a ≠ "a "');
      assert.equal(await held(), 'a', 'a failed compareAndSet changes nothing');
      left = await pttl();
      assert.ok(left > 9_000 && left <= 10_000, `nor the expiry: PTTL ${left}`);
      assert.deepEqual(await store.compareAndSet(key, 'a', 'b', 60_000), { ok: true }, 'a → b');
      assert.equal(await held(), 'b');
      left = await pttl();
      assert.ok(left > 55_000 && left <= 60_000, `the new expiry: PTTL ${left}`);
      assert.deepEqual(await store.compareAndSet(key, 'b', null, 1), { ok: true }, 'b → deleted');
      assert.equal(Number(await raw('EXISTS', stored)), 0);
      assert.equal(await store.get(key), null);
      assert.deepEqual(await store.compareAndSet(key, 'b', 'c', 1000), { ok: false, current: null }, 'gone ≠ b');
      assert.deepEqual(await store.compareAndSet(key, null, null, 1000), { ok: true }, 'absent → absent');
      assert.equal(Number(await raw('EXISTS', stored)), 0);
      // the empty string is a value, not absence (Lua: '' is true)
      assert.deepEqual(await store.compareAndSet(key, null, '', 10_000), { ok: true }, 'absent → ""');
      assert.equal(await held(), '');
      assert.deepEqual(await store.compareAndSet(key, null, 'x', 10_000), { ok: false, current: '' }, '"" ≠ absent');
      assert.deepEqual(await store.compareAndSet(key, 'x', 'y', 10_000), { ok: false, current: '' }, '"" ≠ x');
      const value = 'é ✓ 😀 {"n":[1,2]}\r\n';
      assert.deepEqual(await store.compareAndSet(key, '', value, 10_000), { ok: true }, '"" → text');
      assert.deepEqual(await store.compareAndSet(key, 'x', 'y', 10_000), { ok: false, current: value });
      assert.deepEqual(await store.compareAndSet(key, value, 'z', 10_000), { ok: true }, 'text → z');
      assert.equal(await store.get(key), 'z');
    });

    test('the expiry happens: a key set for 50 ms is gone after it', async () => {
      await store.set(k('short-set'), 's', 50);
      assert.deepEqual(await store.compareAndSet(k('short-cas'), null, 'c', 50), { ok: true });
      for (const name of ['short-set', 'short-cas']) {
        const left = Number(await raw('PTTL', `hp:${k(name)}`));
        assert.ok(left > 0 && left <= 50, `${name}: PTTL ${left}`);
      }
      await sleep(120);
      assert.equal(await store.get(k('short-set')), null);
      assert.equal(await store.get(k('short-cas')), null);
      assert.deepEqual(await store.compareAndSet(k('short-cas'), 'c', 'd', 1000), { ok: false, current: null });
    });

    test('compareAndSet runs by EVALSHA, and by EVAL once the server has lost the script (SCRIPT FLUSH)', async () => {
      const { proxy, sent } = recording(safe);
      const seen = redisStore(proxy, { timeoutMs: TIMEOUT_MS });
      const key = k('noscript');
      await raw('SCRIPT', 'FLUSH');
      assert.deepEqual(await seen.compareAndSet(key, null, 'a', 10_000), { ok: true });
      assert.deepEqual(sent.map((args) => args[0]), ['EVALSHA', 'EVAL']);
      const [[, sha, ...shaRest], [, script, ...evalRest]] = sent;
      assert.equal(createHash('sha1').update(script).digest('hex'), sha, 'EVALSHA names the script EVAL sends');
      const argv = ['1', `hp:${key}`, '0', '', '1', 'a', '10000'];
      assert.deepEqual(shaRest, argv, 'one key (KEYS[1]), the rest arguments');
      assert.deepEqual(evalRest, argv);
      assert.deepEqual((await raw('SCRIPT', 'EXISTS', sha)).map(Number), [1], 'EVAL left it in the script cache');
      sent.length = 0;
      assert.deepEqual(await seen.compareAndSet(key, 'a', 'b', 10_000), { ok: true });
      assert.deepEqual(sent.map((args) => args[0]), ['EVALSHA'], 'once cached, EVALSHA alone');
      assert.equal(await seen.get(key), 'b');
    });

    test('a key holding another type reads as \\0 and its type, and a compare-and-set expecting that writes over it', async () => {
      const key = k('list');
      await raw('RPUSH', `hp:${key}`, 'item');
      assert.equal(await store.get(key), '\0list');
      assert.deepEqual(await store.compareAndSet(key, null, 'x', 10_000), { ok: false, current: '\0list' });
      assert.deepEqual(await raw('LRANGE', `hp:${key}`, '0', '-1').then((r) => r.map(String)), ['item'], 'untouched');
      assert.deepEqual(await store.compareAndSet(key, '\0list', 'x', 10_000), { ok: true });
      assert.equal(String(await raw('GET', `hp:${key}`)), 'x');
    });

    test('an error of the server is a StoreError that carries it (a write past maxmemory)', async () => {
      const key = k('full');
      await raw('CONFIG', 'SET', 'maxmemory', '1'); // every write refused: OOM (the policy is noeviction)
      try {
        for (const [operation, call] of [
          ['set', () => store.set(key, 'x', 1000)],
          ['compareAndSet', () => store.compareAndSet(key, null, 'x', 1000)],
        ]) {
          await assert.rejects(call(), (error) => {
            assert.ok(error instanceof StoreError);
            assert.equal(error.name, 'StoreError');
            assert.equal(error.operation, operation);
            assert.equal(error.key, `hp:${key}`);
            assert.match(error.message, new RegExp(`^${operation} of key "hp:${key}": the store failed: .*OOM`));
            assert.match(String(error.cause?.message), /OOM/);
            return true;
          });
        }
      } finally {
        await raw('CONFIG', 'SET', 'maxmemory', '0');
      }
      assert.equal(await store.get(key), null, 'nothing written');
    });

    test('with the server down every call fails within timeoutMs, and works again after a restart', async () => {
      const late = redisStore(queued, { timeoutMs: TIMEOUT_MS });
      await server.stop();
      // whatever fails below, the server comes back for the clients that follow
      let restarted = false;
      try {
        // both clients have seen their connection end: a call now is refused or queued, not written to a dying
        // socket (which the client would answer with its own "socket ended" error)
        const message = 'both clients see the server gone: not within 5 s';
        await until(() => !kind.ready(safe) && !kind.ready(queued), { everyMs: 10, withinMs: 5_000, message });
        const calls = (s) => [
          ['timeMs', null, () => s.timeMs()],
          ['get', `hp:${k('down')}`, () => s.get(k('down'))],
          ['compareAndSet', `hp:${k('down')}`, () => s.compareAndSet(k('down'), null, 'cas', 60_000)],
          ['set', `hp:${k('late')}`, () => s.set(k('late'), 'queued', 60_000)],
        ];
        // offline queue off: at once, with the client's error
        for (const [operation, key, call] of calls(store)) {
          const { ms, error } = await timed(call());
          assert.ok(error instanceof StoreError, `${operation}: ${error}`);
          assert.equal(error.operation, operation);
          assert.equal(error.key, key);
          assert.match(error.message, new RegExp(`^${operation}${key ? ` of key "${key}"` : ''}: the store failed: `));
          assert.ok(ms <= TIMEOUT_MS + SLACK_MS, `${operation} failed after ${ms.toFixed(0)} ms`);
        }
        // the client's defaults (an offline queue): the call waits in the queue, and fails at its deadline
        for (const [operation, key, call] of calls(late)) {
          const { ms, error } = await timed(call());
          assert.ok(error instanceof StoreError, `${operation}: ${error}`);
          assert.equal(error.operation, operation);
          assert.equal(error.key, key);
          assert.equal(
            error.message,
            `${operation}${key ? ` of key "${key}"` : ''}: no answer from the store within ${TIMEOUT_MS} ms (timeoutMs)`,
          );
          assert.ok(ms >= TIMEOUT_MS - 2 && ms <= TIMEOUT_MS + SLACK_MS, `${operation} failed after ${ms.toFixed(0)} ms`);
        }
        await server.restart();
        restarted = true;
        // the queued client first: it sends its queue on reconnection, in order, before the GET that tells it is back
        await reconnected(() => late.get(k('back')), 'offline queue on');
        // why the docs ask for the offline queue off: the SET that failed its caller was carried out on reconnection
        assert.equal(await late.get(k('late')), 'queued');
        // while the compare-and-set, answered NOSCRIPT by the new server after its deadline, was not sent again (EVAL)
        assert.equal(await late.get(k('down')), null);
        await reconnected(() => store.timeMs(), 'offline queue off');
        assert.deepEqual(await store.compareAndSet(k('back'), null, 'v', 60_000), { ok: true });
        assert.equal(await store.get(k('back')), 'v');
        assert.equal(await late.get(k('back')), 'v');
      } finally {
        if (!restarted) await server.restart();
      }
    });
  });
}

// A Redis Cluster of three masters on 127.0.0.1 (redis-cli --cluster create): each call names one key, so the
// cluster clients route it to the key's node with nothing more; the keys used land on every node.
describe('redisStore on a Redis Cluster (three masters)', () => {
  let cluster;
  /** One plain client per node, to look at each node's own data. */
  let direct;
  before(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    direct = await Promise.all(
      cluster.nodes.map(async ({ port }) => {
        const client = new Ioredis5(port, '127.0.0.1', { lazyConnect: true });
        client.on('error', ignore);
        await client.connect();
        return client;
      }),
    );
  });
  after(async () => {
    for (const client of direct ?? []) client.disconnect();
    await cluster?.stop();
  });

  const ioredisCluster = (Cluster) => async (nodes) => {
    const client = new Cluster(nodes, {
      lazyConnect: true,
      enableOfflineQueue: false,
      redisOptions: { enableOfflineQueue: false, autoResendUnfulfilledCommands: false },
    });
    client.on('error', ignore);
    await client.connect();
    return { client, close: () => client.disconnect() };
  };
  const nodeRedisCluster = (createCluster) => async (nodes) => {
    const client = createCluster({
      rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      defaults: { disableOfflineQueue: true },
    });
    client.on('error', ignore);
    await client.connect();
    return { client, close: () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()) };
  };
  const CLUSTERS = [
    ['ioredis 5 Cluster', ioredisCluster(Ioredis5Cluster)],
    ['ioredis 6 Cluster', ioredisCluster(Ioredis6Cluster)],
    ['iovalkey Cluster', ioredisCluster(IovalkeyCluster)],
    ['node-redis 4 createCluster', nodeRedisCluster(createCluster4)],
    ['node-redis 5 createCluster', nodeRedisCluster(createCluster5)],
    ['node-redis 6 createCluster', nodeRedisCluster(createCluster6)],
  ];

  for (const [index, [name, open]] of CLUSTERS.entries()) {
    test(`${name}: every call on keys of every node, and the NOSCRIPT fallback on each`, async () => {
      const { client, close } = await open(cluster.nodes);
      try {
        const store = redisStore(client, { timeoutMs: 2000 });
        const keys = Array.from({ length: 12 }, (_, i) => `cluster${index}:host-${i}.example`);
        await Promise.all(direct.map((node) => node.call('SCRIPT', 'FLUSH')));
        const before = Date.now();
        const ms = await store.timeMs();
        assert.ok(ms >= before - 1 && ms <= Date.now() + 1, `TIME ${ms}`);
        for (const key of keys) {
          assert.deepEqual(await store.compareAndSet(key, null, `a:${key}`, 60_000), { ok: true }, key);
          assert.deepEqual(await store.compareAndSet(key, null, 'b', 60_000), { ok: false, current: `a:${key}` });
          assert.deepEqual(await store.compareAndSet(key, `a:${key}`, `b:${key}`, 60_000), { ok: true });
          assert.equal(await store.get(key), `b:${key}`);
          await store.set(key, `c:${key}`, 60_000);
          assert.equal(await store.get(key), `c:${key}`);
        }
        // each node holds exactly the keys of its slots, and every node holds some
        const held = await Promise.all(
          direct.map(async (node) => {
            const found = [];
            for (const key of keys) if ((await node.call('EXISTS', `hp:${key}`).catch(() => 0)) === 1) found.push(key);
            return found;
          }),
        );
        assert.deepEqual(held.flat().sort(), [...keys].sort(), 'each key on one node');
        assert.ok(held.every((found) => found.length > 0), `keys per node: ${held.map((f) => f.length)}`);
        for (const key of keys) {
          assert.deepEqual(await store.compareAndSet(key, `c:${key}`, null, 1), { ok: true });
          assert.equal(await store.get(key), null);
        }
      } finally {
        await close();
      }
    });
  }
});

describe('redisStore with clients that are not what they claim (no server)', () => {
  /** A client of `kind` ('call': ioredis-style, 'sendCommand': node-redis-style) answering `answer(args)`. */
  function fake(kind, answer) {
    const sent = [];
    const send = (args) => {
      sent.push(args);
      return answer(args);
    };
    const client = kind === 'call' ? { call: (...args) => send(args) } : { sendCommand: (args) => send(args) };
    return { client: Object.freeze(client), sent };
  }

  const TIME = (s) => s.timeMs();
  const GET = (s) => s.get('k');
  const SET = (s) => s.set('k', 'v', 5);
  const CAS = (s) => s.compareAndSet('k', null, 'v', 5);
  const notTime = 'not [seconds, microseconds]';
  const notScript = 'not [1], [0, 0] or [0, 1, value] (the compare-and-set script)';
  /** [what, the command that answers garbage, its reply, the call, the message] */
  const garbage = [
    ['TIME answering a string', 'TIME', 'abc', TIME, `timeMs: TIME answered a string ("abc"), ${notTime}`],
    ['TIME answering one number', 'TIME', [1700000000], TIME, `timeMs: TIME answered an array of 1 (a number), ${notTime}`],
    [
      'TIME answering microseconds out of range',
      'TIME',
      ['1700000000', '1000000'],
      TIME,
      `timeMs: TIME answered an array of 2 (a string, a string), ${notTime}`,
    ],
    ['TIME answering words', 'TIME', ['soon', 'ish'], TIME, `timeMs: TIME answered an array of 2 (a string, a string), ${notTime}`],
    ['TIME answering null', 'TIME', null, TIME, `timeMs: TIME answered null, ${notTime}`],
    ['GET answering a number', 'GET', 42, GET, 'get of key "hp:k": GET answered a number (42), not a string or null'],
    ['GET answering an array', 'GET', ['v'], GET, 'get of key "hp:k": GET answered an array of 1 (a string), not a string or null'],
    ['GET answering undefined', 'GET', undefined, GET, 'get of key "hp:k": GET answered undefined, not a string or null'],
    ['SET answering null', 'SET', null, SET, 'set of key "hp:k": SET answered null, not "OK"'],
    ['SET answering an object', 'SET', { ok: true }, SET, 'set of key "hp:k": SET answered an object, not "OK"'],
    ['the script answering "OK"', 'EVALSHA', 'OK', CAS, `compareAndSet of key "hp:k": the script answered a string ("OK"), ${notScript}`],
    ['the script answering [2]', 'EVALSHA', [2], CAS, `compareAndSet of key "hp:k": the script answered an array of 1 (a number), ${notScript}`],
    [
      'the script answering found without the value',
      'EVALSHA',
      [0, 1],
      CAS,
      `compareAndSet of key "hp:k": the script answered an array of 2 (a number, a number), ${notScript}`,
    ],
    [
      'the script answering a number as the value',
      'EVALSHA',
      [0, 1, 7],
      CAS,
      `compareAndSet of key "hp:k": the script answered an array of 3 (a number, a number, a number), ${notScript}`,
    ],
    [
      'the script answering [1, 1]',
      'EVALSHA',
      [1, 1],
      CAS,
      `compareAndSet of key "hp:k": the script answered an array of 2 (a number, a number), ${notScript}`,
    ],
  ];
  for (const kind of ['call', 'sendCommand']) {
    for (const [what, command, reply, run, message] of garbage) {
      test(`${kind}: ${what} is a StoreError naming it`, async () => {
        const { client, sent } = fake(kind, (args) =>
          args[0] === command ? Promise.resolve(reply) : Promise.reject(new Error(`unexpected ${args[0]}`)),
        );
        await assert.rejects(run(redisStore(client)), (error) => {
          assert.ok(error instanceof StoreError);
          assert.equal(error.name, 'StoreError');
          assert.equal(error.message, message);
          return true;
        });
        assert.equal(sent.length, 1);
      });
    }
  }

  test('replies as Buffers, and integers as strings (ioredis stringNumbers), are read as the server meant them', async () => {
    const replies = {
      TIME: [Buffer.from('1700000000'), Buffer.from('123456')],
      GET: Buffer.from('é ✓'),
      SET: Buffer.from('OK'),
    };
    const { client } = fake('call', (args) => Promise.resolve(replies[args[0]] ?? replies.EVALSHA));
    const store = redisStore(client);
    assert.equal(await store.timeMs(), 1_700_000_000_123.456);
    assert.equal(await store.get('k'), 'é ✓');
    assert.equal(await store.set('k', 'v', 5), undefined);
    for (const [reply, result] of [
      [['1'], { ok: true }],
      [[1n], { ok: true }],
      [['0', '0'], { ok: false, current: null }],
      [[0, 1, Buffer.from('vé')], { ok: false, current: 'vé' }],
      [['0', '1', ''], { ok: false, current: '' }],
    ]) {
      replies.EVALSHA = reply;
      assert.deepEqual(await store.compareAndSet('k', null, 'v', 5), result);
    }
  });

  test('a client that never answers: every call fails at timeoutMs, naming the operation, the key and the timeout', async () => {
    const { client, sent } = fake('sendCommand', () => new Promise(() => {}));
    const store = redisStore(client, { prefix: 'p/', timeoutMs: 120 });
    for (const [operation, key, call] of [
      ['timeMs', null, () => store.timeMs()],
      ['get', 'p/a', () => store.get('a')],
      ['compareAndSet', 'p/a', () => store.compareAndSet('a', 'x', null, 5)],
      ['set', 'p/a', () => store.set('a', 'v', 5)],
    ]) {
      const { ms, error } = await timed(call());
      assert.ok(error instanceof StoreError, String(error));
      assert.equal(error.message, `${operation}${key ? ` of key "${key}"` : ''}: no answer from the store within 120 ms (timeoutMs)`);
      assert.equal(error.operation, operation);
      assert.equal(error.key, key);
      assert.ok(ms >= 118 && ms <= 120 + SLACK_MS, `${operation} failed after ${ms.toFixed(0)} ms`);
    }
    assert.deepEqual(sent.map((args) => args[0]), ['TIME', 'GET', 'EVALSHA', 'SET']);
  });

  test('calls started apart each fail at their own deadline, and one answered in between is not failed', async () => {
    const { client } = fake('call', (args) => (args[1] === 'p/answered' ? sleep(30).then(() => 'v') : new Promise(() => {})));
    const store = redisStore(client, { prefix: 'p/', timeoutMs: 120 });
    const started = performance.now();
    const calls = [];
    for (const key of ['a', 'answered', 'b', 'c']) {
      const at = performance.now() - started;
      calls.push(timed(store.get(key)).then((r) => ({ ...r, key, at })));
      await sleep(40);
    }
    for (const { ms, error, key } of await Promise.all(calls)) {
      if (key === 'answered') {
        assert.equal(error, undefined);
        continue;
      }
      assert.ok(error instanceof StoreError, String(error));
      assert.ok(ms >= 118 && ms <= 120 + SLACK_MS, `${key} failed after ${ms.toFixed(0)} ms`);
    }
  });

  test('calls that answered hold nothing open: the process leaves at once, however long timeoutMs is', () => {
    const redis = new URL('../../pkg/redis.js', import.meta.url).href;
    const script = `
      const { redisStore } = await import(${JSON.stringify(redis)});
      const store = redisStore({ call: async (command) => (command === 'TIME' ? ['1', '2'] : 'OK') }, { timeoutMs: 60000 });
      for (let i = 0; i < 3; i++) await Promise.all([store.timeMs(), store.set('k', 'v', 5), store.get('k')]);
    `;
    const started = performance.now();
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    const ms = performance.now() - started;
    assert.ok(ms < 10_000, `the process took ${ms.toFixed(0)} ms`);
  });

  test('a client that throws, or rejects with a non-Error, is a StoreError with its cause', async () => {
    const thrown = new Error('socket closed');
    const { client } = fake('call', () => {
      throw thrown;
    });
    await assert.rejects(redisStore(client).get('k'), (error) => {
      assert.ok(error instanceof StoreError);
      assert.equal(error.message, 'get of key "hp:k": the store failed: socket closed');
      assert.equal(error.cause, thrown);
      return true;
    });
    const { client: odd } = fake('call', () => Promise.reject('nope'));
    await assert.rejects(redisStore(odd).timeMs(), { name: 'StoreError', message: 'timeMs: the store failed: a string ("nope")' });
  });

  test('NOSCRIPT leads to EVAL; another error of EVALSHA does not', async () => {
    const noscript = fake('call', (args) =>
      args[0] === 'EVALSHA'
        ? Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'))
        : Promise.resolve([0, 1, 'cur']),
    );
    assert.deepEqual(await redisStore(noscript.client).compareAndSet('k', 'x', 'y', 5), { ok: false, current: 'cur' });
    assert.deepEqual(noscript.sent.map((args) => args[0]), ['EVALSHA', 'EVAL']);
    const other = fake('call', () => Promise.reject(new Error('BUSY Redis is busy running a script')));
    await assert.rejects(redisStore(other.client).compareAndSet('k', 'x', 'y', 5), {
      name: 'StoreError',
      message: 'compareAndSet of key "hp:k": the store failed: BUSY Redis is busy running a script',
    });
    assert.deepEqual(other.sent.map((args) => args[0]), ['EVALSHA']);
  });

  test('a node-redis cluster (getSlotMaster beside sendCommand) is given the key to route by', async () => {
    const sent = [];
    const cluster = Object.freeze({
      getSlotMaster() {},
      sendCommand: (firstKey, isReadonly, args) => {
        sent.push([firstKey, args[0]]);
        return Promise.resolve({ TIME: ['1', '0'], GET: null, SET: 'OK', EVALSHA: [1] }[args[0]]);
      },
    });
    const store = redisStore(cluster);
    assert.equal(await store.timeMs(), 1000);
    assert.equal(await store.get('a'), null);
    await store.set('b', 'v', 5);
    assert.deepEqual(await store.compareAndSet('c', null, 'v', 5), { ok: true });
    assert.deepEqual(sent, [[undefined, 'TIME'], ['hp:a', 'GET'], ['hp:b', 'SET'], ['hp:c', 'EVALSHA']]);
  });

  test('what is not a client is a TypeError naming what is missing', () => {
    const said =
      'redisStore: client must be an ioredis or iovalkey client (with a call method) or a node-redis client ' +
      '(with a sendCommand method), got';
    for (const [client, what] of [
      [null, 'null'],
      [undefined, 'undefined'],
      [42, 'a number (42)'],
      ['redis://127.0.0.1:6379', 'a string ("redis://127.0.0.1:6379")'],
      [() => {}, 'a function'], // which has a call method: Function.prototype.call
    ]) {
      assert.throws(() => redisStore(client), { name: 'TypeError', message: `${said} ${what}` });
    }
    for (const client of [{}, { get() {}, set() {} }, { call: 'yes' }, { sendCommand: 1 }]) {
      assert.throws(() => redisStore(client), {
        name: 'TypeError',
        message: 'redisStore: client has neither a call method (ioredis, iovalkey) nor a sendCommand method (node-redis)',
      });
    }
  });

  test('wrong options are a TypeError or RangeError naming the field', () => {
    const { client } = fake('call', () => Promise.resolve(null));
    const range = (got) => `redisStore: options.timeoutMs must be a number of milliseconds > 0 and ≤ 2147483647, got ${got}`;
    for (const [options, name, message] of [
      [null, 'TypeError', 'redisStore: options must be an object, got null'],
      ['hp:', 'TypeError', 'redisStore: options must be an object, got a string'],
      [{ prefix: 5 }, 'TypeError', 'redisStore: options.prefix must be a string, got a number'],
      [{ prefix: null }, 'TypeError', 'redisStore: options.prefix must be a string, got null'],
      [{ timeoutMs: '1000' }, 'TypeError', 'redisStore: options.timeoutMs must be a number, got a string'],
      [{ timeoutMs: 0 }, 'RangeError', range('0')],
      [{ timeoutMs: -5 }, 'RangeError', range('-5')],
      [{ timeoutMs: NaN }, 'RangeError', range('NaN')],
      [{ timeoutMs: Infinity }, 'RangeError', range('Infinity')],
      [{ timeoutMs: 2 ** 31 }, 'RangeError', range('2147483648')],
    ]) {
      assert.throws(() => redisStore(client, options), { name, message });
    }
    const fraction = redisStore(client, { timeoutMs: 0.5, prefix: '' });
    assert.equal(typeof fraction.get, 'function', 'a fraction of a millisecond is a timeout');
  });

  test('wrong arguments reject with a TypeError or RangeError naming them, and send nothing', async () => {
    const { client, sent } = fake('call', () => Promise.resolve(null));
    const store = redisStore(client);
    const ttl = (op, got) => `${op}: ttlMs must be a whole number of milliseconds ≥ 1, got ${got}`;
    for (const [call, name, message] of [
      [() => store.get(5), 'TypeError', 'get: key must be a string, got a number'],
      [() => store.get(), 'TypeError', 'get: key must be a string, got undefined'],
      [() => store.set(null, 'v', 5), 'TypeError', 'set: key must be a string, got null'],
      [() => store.set('k', null, 5), 'TypeError', 'set: value must be a string, got null'],
      [() => store.set('k', 5, 5), 'TypeError', 'set: value must be a string, got a number'],
      [() => store.set('k', 'v', '5'), 'TypeError', 'set: ttlMs must be a number, got a string'],
      [() => store.set('k', 'v', 0), 'RangeError', ttl('set', 0)],
      [() => store.set('k', 'v', 1.5), 'RangeError', ttl('set', 1.5)],
      [() => store.compareAndSet(['k'], null, 'v', 5), 'TypeError', 'compareAndSet: key must be a string, got an array'],
      [() => store.compareAndSet('k', undefined, 'v', 5), 'TypeError', 'compareAndSet: expected must be a string or null, got undefined'],
      [() => store.compareAndSet('k', null, 7, 5), 'TypeError', 'compareAndSet: value must be a string or null, got a number'],
      [() => store.compareAndSet('k', null, 'v'), 'TypeError', 'compareAndSet: ttlMs must be a number, got undefined'],
      [() => store.compareAndSet('k', null, null, -1), 'RangeError', ttl('compareAndSet', -1)],
      [() => store.compareAndSet('k', null, 'v', NaN), 'RangeError', ttl('compareAndSet', NaN)],
      [() => store.compareAndSet('k', null, 'v', 2 ** 53), 'RangeError', ttl('compareAndSet', 2 ** 53)],
    ]) {
      const promise = call();
      assert.ok(promise instanceof Promise, message);
      await assert.rejects(promise, { name, message });
    }
    assert.deepEqual(sent, []);
  });
});

describe('SharedLimiter on redisStore', () => {
  test('a host key holding another Redis type is an unreadable record: named, rebuilt without a burst, written over', async () => {
    const client = await ioredisKind(Ioredis5).open(server.port, true);
    try {
      await client.call('RPUSH', 'fl:host:a.example', 'item');
      const warnings = [];
      const limiter = new SharedLimiter({
        ratePerSec: 5,
        burstCapacity: 5,
        burstJustification: 'test',
        robots: 'ignore',
        fleetSize: 1,
        store: redisStore(client, { prefix: 'fl:' }),
        onStoreWarning: (error) => warnings.push(error),
      });
      const d = await limiter.acquire('http://a.example/');
      assert.deepEqual(warnings.map((e) => e.name), ['HostRecordUnreadable']);
      assert.match(warnings[0].message, /record of a\.example is unreadable/);
      assert.equal(d.layer, 'burst', 'no fresh burst');
      assert.ok(d.waitMs >= 190, `waits a departure's spacing: ${d.waitMs}`);
      assert.equal(await client.call('TYPE', 'fl:host:a.example'), 'string', 'written over');
      // the store was not taken for failing: the next host's decision is written at once
      await limiter.acquire('http://b.example/');
      assert.equal(await client.call('EXISTS', 'fl:host:b.example'), 1);
    } finally {
      client.disconnect();
    }
  });
});
