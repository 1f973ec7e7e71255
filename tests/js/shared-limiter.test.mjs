// SharedLimiter against a store in memory (memory-store.mjs): several limiters in one process stand for a fleet's
// processes, and the store's own record of each host is what they share. The reserved instants (`departsMs`) are
// in the store's clock and come from the core's arithmetic, so they are checked exactly; what crosses a real
// network to a real Redis, from several processes, is tests/js/shared-fleet.test.mjs.

import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { Limiter, SharedLimiter } from '../../pkg/node.js';
import { memoryStore } from './memory-store.mjs';
import { Origin, sleep } from './helpers.mjs';

const URL_A = 'http://a.example/page';
const base = { ratePerSec: 5, burstCapacity: 1, robots: 'ignore' };

/** `n` limiters sharing `store`, each told of its faults in `warnings`. */
function fleet(store, n, config = {}) {
  const warnings = [];
  const limiters = Array.from(
    { length: n },
    () => new SharedLimiter({ ...base, store, fleetSize: n, onStoreWarning: (e) => warnings.push(e), ...config }),
  );
  return { limiters, warnings };
}

test('limiters sharing a store reserve one host its departures one interval apart, as one limiter would', async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 3);
  const decisions = [];
  for (let i = 0; i < 9; i++) decisions.push(await limiters[i % 3].acquire(URL_A));
  assert.ok(decisions.every((d) => d.reserved && d.host === 'a.example'));
  const departs = decisions.map((d) => d.departsMs);
  for (let i = 1; i < departs.length; i++) assert.equal(departs[i] - departs[i - 1], 200, `departure ${i}`);
  assert.deepEqual(
    decisions.map((d) => d.layer),
    ['none', ...Array(8).fill('burst')],
  );
  // the whole fleet's counters are in the record
  assert.equal((await limiters[0].stats('a.example')).decisions, 9);
});

test("a host's key expires once its state has nothing left to remember", async () => {
  const store = memoryStore();
  const [a] = fleet(store, 1).limiters;
  await a.acquire(URL_A); // 5/s, burst 1: fresh again 200 ms (and a margin) after this departure
  const entry = store.data.get('host:a.example');
  const ttl = entry.until - Date.now();
  assert.ok(ttl > 150 && ttl < 1000, `kept ${ttl} ms`);
  await sleep(ttl + 10);
  assert.equal(store.peek('host:a.example'), null, 'gone from the store');
  // the next decision finds no record and goes at once, as for a host never seen
  assert.equal((await a.acquire(URL_A)).waitMs, 0);
  // a 429 is remembered for its cooldown
  await a.observe(URL_A, { status: 429, headers: { 'retry-after': '30' } });
  assert.ok(store.data.get('host:a.example').until - Date.now() >= 30_000);
});

test('an uncontended decision is one round trip: one compare-and-set, no read', async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 2);
  const [a, b] = limiters;
  await a.acquire(URL_A); // first contact: the clock's samples, and a host with no record yet
  assert.deepEqual(store.take(), { timeMs: 3, get: 0, compareAndSet: 1, set: 0 });
  await a.acquire(URL_A);
  await a.acquire(URL_A);
  assert.deepEqual(store.take(), { timeMs: 0, get: 0, compareAndSet: 2, set: 0 });
  // another process wrote the host since: a's compare-and-set is lost, answers the record that won, and a
  // decides again on it (two compare-and-sets, still no read)
  await b.acquire(URL_A);
  store.take();
  const d = await a.acquire(URL_A);
  assert.deepEqual(store.take(), { timeMs: 0, get: 0, compareAndSet: 2, set: 0 });
  assert.equal(d.waitMs > 500, true, `behind b's reservation: ${d.waitMs}`);
});

test("a SharedLimiter's instants are its store's, whatever this process's clock says", async () => {
  // the store's clock runs 5 s ahead of this process's: the fleet's instants are the store's
  const store = memoryStore({ skewMs: 5000 });
  const [a, b] = fleet(store, 2).limiters;
  const da = await a.acquire(URL_A);
  const db = await b.acquire(URL_A);
  assert.ok(Math.abs(a.clockOffsetMs - 5000) < 50, `offset ${a.clockOffsetMs}`);
  assert.ok(Math.abs(da.departsMs - (Date.now() + 5000)) < 100, 'reserved for now by the store');
  assert.equal(db.departsMs - da.departsMs, 200);
  assert.ok(db.waitMs > 150 && db.waitMs <= 200, `a wait measured in the store's clock: ${db.waitMs}`);
});

test('a record that cannot be read is named, and the host rebuilt without a burst', async () => {
  const store = memoryStore();
  const config = { burstCapacity: 5, burstJustification: 'test' };
  const { limiters, warnings } = fleet(store, 1, config);
  const [a] = limiters;
  const first = await a.acquire(URL_A);
  assert.equal(first.waitMs, 0);
  const record = store.peek('host:a.example');
  for (const [bad, says] of [
    ['{"tokens": 5}', 'not a hostpace snapshot'],
    [record.replace('9:a.example', '9:b.example'), '"b.example"'],
    [record.slice(0, record.length / 2), 'malformed'],
  ]) {
    store.data.set('host:a.example', { value: bad, until: Date.now() + 60_000 });
    warnings.length = 0;
    // a second process, which never saw the host: the store's record is all it has
    const [fresh] = fleet(store, 1, { ...config, onStoreWarning: (e) => warnings.push(e) }).limiters;
    const d = await fresh.acquire(URL_A);
    assert.equal(warnings.length, 1, bad);
    assert.equal(warnings[0].name, 'HostRecordUnreadable');
    assert.match(warnings[0].message, /record of a\.example is unreadable/);
    assert.ok(warnings[0].message.includes(says), warnings[0].message);
    assert.equal(d.layer, 'burst', 'no fresh burst');
    assert.ok(d.waitMs >= 190, `waits a departure's spacing: ${d.waitMs}`);
    assert.notEqual(store.peek('host:a.example'), bad, 'the record is written over');
  }
});

test('a store that answers garbage, or is not a store, is a clear error', async () => {
  for (const [bad, says] of [
    [undefined, /store: expected a SharedStore/],
    [42, /store: expected a SharedStore/],
    [{ get() {} }, /timeMs, compareAndSet, set/],
  ]) {
    assert.throws(() => new SharedLimiter({ ...base, store: bad, fleetSize: 1 }), says);
  }
  assert.throws(() => new SharedLimiter({ ...base, store: memoryStore() }), /fleetSize: expected the number of processes/);
  assert.throws(() => new SharedLimiter({ ...base, store: memoryStore(), fleetSize: 2, onStoreError: 'x' }), /onStoreError/);
  assert.throws(() => new SharedLimiter({ ...base, store: memoryStore(), fleetSize: 2, ratePerSec: -1 }), /ratePerSec/);
  const store = memoryStore();
  const { limiters, warnings } = fleet(store, 2, { onStoreError: 'local' });
  store.compareAndSet = async () => 'yes';
  const d = await limiters[0].acquire(URL_A);
  assert.ok(d.reserved, 'paced on its own');
  assert.match(warnings.at(-1).message, /answered compareAndSet\(host:a\.example\) with a string: expected \{ ok: true \}/);
  assert.equal(warnings.at(-1).name, 'StoreError');
  store.compareAndSet = async () => ({
    get ok() {
      throw new RangeError('a getter threw');
    },
  });
  const [getter] = fleet(store, 2, { onStoreWarning: (e) => warnings.push(e) }).limiters;
  assert.ok((await getter.acquire(URL_A)).reserved, 'paced on its own');
  assert.equal(warnings.at(-1).name, 'StoreError');
  assert.match(warnings.at(-1).message, /compareAndSet\(host:a\.example\) with an object that threw \(a getter threw\)/);
  store.compareAndSet = async () => ({ ok: false, current: 7 });
  store.timeMs = async () => 'noon';
  const [fresh] = fleet(store, 2, { onStoreWarning: (e) => warnings.push(e) }).limiters;
  await fresh.acquire(URL_A);
  assert.match(warnings.at(-1).message, /answered timeMs\(\) with a string: expected milliseconds since the epoch/);
  await assert.rejects(limiters[0].acquire(URL_A, 5), /takes its instants from the store's clock/);
});

test("onStoreError 'local': a store out of reach paces each process at its share, and its last departure carries over", async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 4); // 5/s shared: 1.25/s each on its own, 800 ms apart
  const [a] = limiters;
  const before = await a.acquire(URL_A);
  store.fail = new Error('connection refused');
  const own = [await a.acquire(URL_A), await a.acquire(URL_A), await a.acquire(URL_A)];
  assert.equal(own[1].departsMs - own[0].departsMs, 800);
  assert.equal(own[2].departsMs - own[1].departsMs, 800);
  store.fail = undefined;
  await sleep(1050); // the store is asked again a second after it failed
  const back = await a.acquire(URL_A);
  assert.ok(back.departsMs >= own[2].departsMs + 200, 'no departure closer than the policy after its last one');
  assert.ok(before.departsMs < own[0].departsMs);
});

test("onStoreError 'wait': a call holds until the store answers, and gives up after storeWaitMs", async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 2, { onStoreError: 'wait', storeWaitMs: 2500 });
  const [a] = limiters;
  await a.acquire(URL_A);
  store.fail = new Error('connection refused');
  const waiting = a.acquire(URL_A);
  setTimeout(() => (store.fail = undefined), 300);
  const d = await waiting;
  assert.ok(d.reserved);
  store.fail = new Error('connection refused');
  const started = Date.now();
  await assert.rejects(a.acquire(URL_A), { name: 'StoreError' });
  const waited = Date.now() - started;
  assert.ok(waited >= 1900 && waited < 3500, `waited ${waited} ms`);
  // the call's signal bounds the wait too
  const aborted = new AbortController();
  setTimeout(() => aborted.abort(new Error('stop')), 100);
  await assert.rejects(a.acquire(URL_A, undefined, { signal: aborted.signal }), /stop/);
});

test('a permit held by another process is asked for again every 250 ms, and comes back at its lease end', async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 2, { maxConcurrency: 1, leaseSec: 1, ratePerSec: 100, burstCapacity: 1 });
  const [a, b] = limiters;
  const held = await a.acquire(URL_A); // never released: the process holding it died
  assert.ok(held.reserved && held.permitId !== undefined);
  const blocked = await b.acquire(URL_A);
  assert.equal(blocked.reserved, false);
  assert.equal(blocked.layer, 'concurrency');
  assert.equal(blocked.waitMs, 250, 'capped: a release elsewhere is not told to this process');
  const started = Date.now();
  const got = await b.schedule(URL_A, () => Date.now());
  assert.ok(got - started >= 900 && got - started < 1600, `the lease ended after ${got - started} ms`);
  // a's permit given back by another process's limiter is gone from the shared record
  await a.release(URL_A, held.permitId);
  assert.equal((await b.stats('a.example')).inFlight, 0);
});

test('robots.txt is fetched once for the fleet, and its rules reach every process', async () => {
  const origin = await Origin.start({ '/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /private\n' } });
  try {
    const store = memoryStore();
    const config = { ratePerSec: 20, burstCapacity: 1, robots: 'obey' };
    const { limiters } = fleet(store, 3, config);
    const results = await Promise.allSettled(
      limiters.flatMap((l, i) => [l.fetch(origin.url(`/p${i}`)), l.fetch(origin.url(`/private/${i}`))]),
    );
    assert.equal(origin.arrivals('/robots.txt').length, 1, 'one robots.txt for the fleet');
    const refused = results.filter((r) => r.status === 'rejected');
    assert.equal(refused.length, 3);
    assert.ok(refused.every((r) => r.reason.name === 'RobotsDisallowed'));
    assert.equal(origin.log.filter((e) => e.path.startsWith('/private')).length, 0, 'a disallowed URL is never sent');
    assert.ok(store.peek(`robots:${origin.host}`).includes('Disallow: /private'));
  } finally {
    await origin.close();
  }
});

test('a 429 reported by one process holds every process until its cooldown ends', async () => {
  const store = memoryStore();
  const { limiters } = fleet(store, 2, { ratePerSec: 10 });
  const [a, b] = limiters;
  await a.acquire(URL_A);
  const observed = await a.observe(URL_A, { status: 429, headers: { 'retry-after': '2' } });
  assert.ok(observed.cooldownUntilMs !== undefined, JSON.stringify(observed));
  const d = await b.acquire(URL_A);
  assert.equal(d.layer, 'cooldown');
  assert.ok(d.waitMs >= 1900, `b waits for a's cooldown: ${d.waitMs}`);
  // and a Limiter of its own would not have known
  assert.equal(new Limiter(base).acquire(URL_A).waitMs, 0);
});

test("a late report of robots.txt leaves the fleet's row of the copy in force", async () => {
  const store = memoryStore();
  const config = { ratePerSec: 50, robots: 'obey', robotsTimeoutSec: 1 };
  const [a, b, c] = fleet(store, 3, config).limiters;
  const url = 'http://r.example/private/x';
  const first = await a.visit(url);
  assert.equal(first.turn, 'fetchRobots');
  await sleep(first.timeoutMs + 1100); // a's fetch is given up on: another may start
  const second = await b.visit(url);
  assert.equal(second.turn, 'fetchRobots');
  await b.robotsFetched('r.example', 200, 'User-agent: *\nDisallow: /private\n', undefined, undefined, second.fetch);
  const row = store.peek('robots:r.example');
  // a's answer comes after b's: stale, it changes nothing, the row of b's copy included
  assert.equal(await a.robotsFetched('r.example', 200, 'User-agent: *\nDisallow:\n', undefined, undefined, first.fetch), undefined);
  assert.equal(store.peek('robots:r.example'), row);
  // nor does a status without rules, with a body (the copy in force stays b's while it fails)
  await b.robotsFetched('r.example', 503, 'Service Unavailable');
  assert.equal(store.peek('robots:r.example'), row);
  await assert.rejects(c.visit(url), { name: /RobotsDisallowed|RobotsUnavailable/ });
});

test("a store whose clock is more than a day off is named, and each process paces on its own", async () => {
  const store = memoryStore({ skewMs: 2 * 86_400_000 });
  const { limiters, warnings } = fleet(store, 2);
  const d = await limiters[0].acquire(URL_A);
  assert.ok(Math.abs(d.departsMs - Date.now()) < 100, 'no instant 2 days ahead');
  assert.equal(limiters[0].clockOffsetMs, undefined);
  assert.equal(warnings[0].name, 'StoreError');
  assert.match(warnings[0].message, /store's clock \(timeMs\) is 17\d{7} ms off/);
  // sent(atMs) is not moved by an offset it refused
  await limiters[0].sent(URL_A, Date.now());
  assert.ok((await limiters[0].acquire(URL_A)).waitMs < 1000);
});

test("onStoreError 'local': a cooldown holds through a store outage, and one learned in it reaches the fleet", async () => {
  const store = memoryStore();
  const [a, b] = fleet(store, 2).limiters;
  await a.acquire(URL_A);
  await a.observe(URL_A, { status: 429, headers: { 'retry-after': '30' } });
  store.fail = new Error('connection refused');
  const during = await a.acquire(URL_A);
  assert.ok(during.waitMs > 29_000, `the cooldown the fleet holds holds on its own too: ${JSON.stringify(during)}`);
  // a 429 learned while the store is out of reach
  const URL_B = 'http://b.example/page';
  assert.equal((await a.acquire(URL_B)).waitMs, 0);
  await a.observe(URL_B, { status: 429, headers: { 'retry-after': '30' } });
  store.fail = undefined;
  await sleep(1050);
  const back = await a.acquire(URL_B);
  assert.ok(back.waitMs > 28_000, `handed to the shared state: ${JSON.stringify(back)}`);
  const other = await b.acquire(URL_B);
  assert.ok(other.waitMs > 28_000, `${JSON.stringify(other)}`);
});

test('calls whose store answered hold nothing open: the process leaves at once, however long storeTimeoutMs is', () => {
  const node = new URL('../../pkg/node.js', import.meta.url).href;
  const memory = new URL('./memory-store.mjs', import.meta.url).href;
  const script = `
    const { SharedLimiter } = await import(${JSON.stringify(node)});
    const { memoryStore } = await import(${JSON.stringify(memory)});
    const limiter = new SharedLimiter({ ratePerSec: 5, robots: 'ignore', store: memoryStore(), fleetSize: 2, storeTimeoutMs: 60000 });
    for (let i = 0; i < 3; i++) await limiter.acquire('http://a.example/' + i);
  `;
  const started = performance.now();
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
  const ms = performance.now() - started;
  assert.ok(ms < 10_000, `the process took ${ms.toFixed(0)} ms`);
});

/** `store` as one process reaches it: `link.fail` (an error) makes this process's calls reject, not the others'. */
function linkTo(store) {
  const link = { fail: undefined };
  for (const m of ['timeMs', 'get', 'compareAndSet', 'set']) {
    link[m] = (...args) => (link.fail ? Promise.reject(link.fail) : store[m](...args));
  }
  return link;
}

test("a permit taken while paced on its own is numbered apart, and giving it back frees no other process's", async () => {
  const store = memoryStore();
  const config = { ...base, ratePerSec: 100, burstCapacity: 10, maxConcurrency: 1, leaseSec: 60, fleetSize: 2 };
  const link = linkTo(store);
  const a = new SharedLimiter({ ...config, store: link, onStoreWarning: () => {} });
  const [b, c] = [0, 1].map(() => new SharedLimiter({ ...config, store }));
  const first = await a.acquire(URL_A);
  await a.depart(URL_A, first.departsMs);
  await a.release(URL_A, first.permitId);
  link.fail = new Error('connection refused');
  const own = await a.acquire(URL_A); // paced on its own, from the shared state it knew
  assert.ok(own.reserved && own.permitId < 0, `numbered below zero: ${own.permitId}`);
  await a.depart(URL_A, own.departsMs);
  const shared = await b.acquire(URL_A); // the shared state's next permit: the number a's copy would have given
  assert.ok(shared.reserved && shared.permitId === -own.permitId, `${shared.permitId}`);
  await b.depart(URL_A, shared.departsMs);
  link.fail = undefined;
  await a.release(URL_A, own.permitId);
  const d = await c.acquire(URL_A);
  assert.equal(d.reserved, false, "b's permit is still held");
  assert.equal(d.layer, 'concurrency');
});

test("onStoreError 'local': a permit given back while the store is out of reach is given back to the fleet", async () => {
  const store = memoryStore();
  const config = { ...base, ratePerSec: 100, burstCapacity: 10, maxConcurrency: 1, leaseSec: 60, fleetSize: 2 };
  const link = linkTo(store);
  const a = new SharedLimiter({ ...config, store: link, onStoreWarning: () => {} });
  const held = await a.acquire(URL_A);
  await a.depart(URL_A, held.departsMs);
  link.fail = new Error('connection refused');
  await a.release(URL_A, held.permitId);
  link.fail = undefined;
  await sleep(1050); // the store is asked again a second after it failed
  const d = await a.acquire(URL_A);
  assert.ok(d.reserved, `the permit is free in the shared state: ${d.layer}`);
});

test("onStoreError 'local': a decision the store never took is not counted when the process goes on alone", async () => {
  const store = memoryStore();
  const link = linkTo(store);
  const a = new SharedLimiter({ ...base, maxConcurrency: 1, fleetSize: 1, store: link, onStoreWarning: () => {} });
  await a.stats('a.example'); // the clock measured, while the store answers
  link.fail = new Error('connection refused');
  const d = await a.acquire(URL_A);
  assert.ok(d.reserved && d.waitMs === 0, `no permit held by the failed decision: ${d.layer} ${d.waitMs}`);
});

test("onStoreError 'local': a process that starts while the store is out of reach hands its pacing over in the store's clock", async () => {
  // the store's clock is 2 s ahead: what the process did on its own, on its own clock, is moved to the store's
  const store = memoryStore({ skewMs: 2000 });
  const a = new SharedLimiter({ ...base, ratePerSec: 2, burstCapacity: 4, fleetSize: 2, store, onStoreWarning: () => {} });
  store.fail = new Error('connection refused');
  const own = [await a.acquire(URL_A), await a.acquire(URL_A), await a.acquire(URL_A)];
  assert.deepEqual(own.map((d) => d.waitMs > 0), [false, false, true]);
  store.fail = undefined;
  await sleep(1050);
  const back = [];
  for (let i = 0; i < 4; i++) back.push(await a.acquire(URL_A));
  // the last departure on its own is charged: the bucket is empty after it, 500 ms apart from then on
  assert.ok(back[0].waitMs > 0, `no burst: ${back.map((d) => Math.round(d.waitMs))}`);
  for (let i = 1; i < 4; i++) assert.equal(back[i].departsMs - back[i - 1].departsMs, 500);
});

test('hosts whose records expired are let go as others are added', async () => {
  const store = memoryStore();
  const a = new SharedLimiter({ ...base, ratePerSec: 1000, burstCapacity: 1, fleetSize: 1, store });
  for (let h = 0; h < 2000; h++) await a.acquire(`http://h${h}.example/`);
  await sleep(50); // 1000/s: every record expired (1 ms and a margin)
  for (let h = 2000; h < 4000; h++) await a.acquire(`http://h${h}.example/`);
  assert.ok(a.hostsKept <= 2100, `kept ${a.hostsKept} of 4000`);
});

test("onStoreError 'wait': reports after a task are bounded by the call's timeoutMs", async () => {
  const store = memoryStore();
  const a = new SharedLimiter({ ...base, store, fleetSize: 1, onStoreError: 'wait', storeWaitMs: 10_000 });
  const started = Date.now();
  const task = async () => {
    store.fail = new Error('connection refused'); // down while the task runs: its report cannot be written
    return { status: 200, headers: {} };
  };
  await assert.rejects(a.schedule(URL_A, task, { timeoutMs: 1500 }));
  const took = Date.now() - started;
  assert.ok(took < 3000, `settled after ${took} ms`);
});

test('a host the registry has no room for is said so, not taken for an unreadable record', async () => {
  const store = memoryStore();
  const warnings = [];
  const config = { ...base, ratePerSec: 1, maxHosts: 1000, fleetSize: 1, store, onStoreWarning: (e) => warnings.push(e) };
  const a = new SharedLimiter(config);
  for (let h = 0; h < 1000; h++) await a.acquire(`http://h${h}.example/`);
  await assert.rejects(a.acquire('http://one-more.example/'), /full/);
  assert.deepEqual(warnings.map((e) => e.name), []);
});

test("onStoreError 'local': permits taken on its own in one outage are still held in the next", async () => {
  const store = memoryStore();
  const link = linkTo(store);
  const config = { ...base, ratePerSec: 0.2, maxConcurrency: 1, leaseSec: 60, fleetSize: 1 };
  const a = new SharedLimiter({ ...config, store: link, onStoreWarning: () => {} });
  const first = await a.acquire(URL_A);
  await a.depart(URL_A, first.departsMs);
  await a.release(URL_A, first.permitId);
  link.fail = new Error('connection refused');
  const own1 = await a.acquire(URL_A); // a long request: still out when the store fails again
  assert.ok(own1.reserved && own1.permitId < 0);
  await a.depart(URL_A, own1.departsMs);
  link.fail = undefined;
  await sleep(1050);
  await a.observe(URL_A, { status: 200, headers: {} }); // through the store again
  link.fail = new Error('connection refused');
  const own2 = await a.acquire(URL_A);
  assert.equal(own2.reserved, false, `one permit, and own1 holds it: ${own2.permitId}`);
  assert.equal(own2.layer, 'concurrency');
  await a.release(URL_A, own1.permitId);
  const own3 = await a.acquire(URL_A);
  assert.ok(own3.reserved && own3.permitId < 0 && own3.permitId !== own1.permitId, `${own3.permitId}`);
});

test("onStoreError 'local': a permit given back in an outage reaches the fleet once the store answers again", async () => {
  const store = memoryStore();
  const link = linkTo(store);
  const config = { ...base, ratePerSec: 100, burstCapacity: 10, maxConcurrency: 1, leaseSec: 60, fleetSize: 2 };
  const a = new SharedLimiter({ ...config, store: link, onStoreWarning: () => {} });
  const b = new SharedLimiter({ ...config, store });
  const held = await a.acquire(URL_A);
  await a.depart(URL_A, held.departsMs);
  link.fail = new Error('connection refused');
  await a.release(URL_A, held.permitId);
  link.fail = undefined;
  await sleep(1050);
  await a.acquire('http://other.example/'); // a's next call through the store, on another host
  await sleep(20); // the hand-over runs in the background
  const d = await b.acquire(URL_A);
  assert.ok(d.reserved, `the permit is free for the fleet: ${d.layer}`);
});

test("onStoreError 'wait': a permit given back is not held for the store, and reaches the fleet once it answers", async () => {
  const store = memoryStore();
  const link = linkTo(store);
  const config = { ...base, ratePerSec: 100, burstCapacity: 10, maxConcurrency: 1, leaseSec: 60, fleetSize: 2 };
  const a = new SharedLimiter({ ...config, store: link, onStoreError: 'wait', storeWaitMs: 10_000, onStoreWarning: () => {} });
  const b = new SharedLimiter({ ...config, store });
  const held = await a.acquire(URL_A);
  await a.depart(URL_A, held.departsMs);
  link.fail = new Error('connection refused');
  const started = Date.now();
  await a.release(URL_A, held.permitId);
  assert.ok(Date.now() - started < 500, 'answered at once');
  link.fail = undefined;
  await a.acquire('http://other.example/');
  await sleep(20);
  const d = await b.acquire(URL_A);
  assert.ok(d.reserved, `the permit is free for the fleet: ${d.layer}`);
});

test("a decision on a host rebuilt from an unreadable record is undone too when the store fails to take it", async () => {
  const store = memoryStore();
  store.data.set('host:a.example', { value: 'hpr 7 garbage', until: Date.now() + 60_000 });
  let writes = 0;
  const link = linkTo(store);
  link.compareAndSet = (...args) => (++writes === 2 ? Promise.reject(new Error('timeout')) : store.compareAndSet(...args));
  const warnings = [];
  const config = { ...base, ratePerSec: 100, burstCapacity: 10, maxConcurrency: 1, leaseSec: 60, fleetSize: 1 };
  const a = new SharedLimiter({ ...config, store: link, onStoreWarning: (e) => warnings.push(e.name) });
  const d = await a.acquire(URL_A); // the record read, rebuilt, decided on, not written: decided again alone
  assert.deepEqual(warnings, ['HostRecordUnreadable', 'StoreError']);
  assert.ok(d.reserved && d.permitId < 0, `no permit held by the decision not written: ${d.layer}`);
});
