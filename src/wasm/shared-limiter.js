// `SharedLimiter`: the `Limiter` shape for a fleet of processes on their own machines that share one politeness
// budget per host through a store (Redis or Valkey through `hostpace/redis`, or any `SharedStore`).
//
// Each host's state is one record in the store, in the core's snapshot format. A call about a host adopts the
// host's record into this process's core (the copy this process last wrote; none for a host it never wrote), lets
// the core decide, and writes the host's new record back with a compare-and-set: one round trip when no other
// process wrote the host since. A lost compare-and-set adopts the record that won and decides again (a bounded
// number of times, with jitter). Instants come from the store's clock: the offset to it is measured at the first
// call and refreshed, keeping the sample of the shortest round trip. robots.txt is fetched once for the fleet (the
// fetch under way is in the record: the others hold), and its rules are kept in a row of their own.
//
// When the store fails (an error, a timeout), `onStoreError: 'local'` paces this process on its own at its share of
// the policy (the core's `Policy::fleet_share`: the rate divided by `fleetSize`) until the store answers again,
// and then hands the host's last departure, a cooldown learned and the shared permits given back meanwhile to the
// shared record, so nothing bursts and nothing stays held; a permit taken on its own is numbered below zero and
// given back there. `'wait'` holds the call until the store answers (at most the call's `timeoutMs`, and
// `storeWaitMs`); a release is never held, but given back once the store answers. Every decision is the core's;
// this file moves records and waits.
import { Limiter as RawLimiter, nowMs as platformMs, sharedRecheckMs } from './hostpace.js';
import { thrown } from './answer.js';
import { Deadlines } from './deadlines.js';
import { kind, signalOf, sleep, urlArg, wake } from './lifecycle.js';
import { fetchOnTurns, scheduleOnTurns } from './turns.js';

/** Compare-and-sets lost in a row before a call gives up on the store (it is then handled as a store error). */
const CONFLICT_TRIES = 16;
/** Lost compare-and-sets retried at once on the record that won; later ones wait a random moment and read again. */
const EAGER_TRIES = 3;
/** While the store is failing, how long calls go without asking it ('local'), or between asks ('wait'). */
const STORE_RETRY_MS = 1000;
/** How often the offset to the store's clock is measured again. */
const CLOCK_REFRESH_MS = 60_000;
/** Samples of the store's clock taken at the first call (the one of the shortest round trip is kept). */
const CLOCK_SAMPLES = 3;
/** How long a kept clock sample stays the best one: an older sample gives way to a newer one. */
const CLOCK_SAMPLE_LIFE_MS = 10 * 60_000;

const STORE_METHODS = ['timeMs', 'get', 'compareAndSet', 'set'];
const ON_STORE_ERROR = ['local', 'wait'];

/** The error of a store that failed, timed out, or answered what it should not. */
class StoreError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'StoreError';
  }
}

/** A whole number from `min` to `max`, or `fallback` when absent; else a TypeError naming it. */
function wholeOption(value, name, min, max, fallback, expected) {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  const got = typeof value === 'number' ? `the number ${value}` : kind(value);
  throw new TypeError(`invalid config field ${name}: expected ${expected}, got ${got}`);
}

/** The store of a config, checked to have every method of `SharedStore`. */
function storeArg(store) {
  if (store === null || typeof store !== 'object') {
    const got = kind(store);
    throw new TypeError(`invalid config field store: expected a SharedStore (e.g. redisStore(client)), got ${got}`);
  }
  const missing = STORE_METHODS.filter((m) => typeof store[m] !== 'function');
  if (missing.length > 0) {
    throw new TypeError(`invalid config field store: a SharedStore has ${missing.join(', ')} (not functions here)`);
  }
  return store;
}

/**
 * This process's own clock for what it keeps of the store (when a record it wrote expires, how long the store is
 * left alone after it failed): milliseconds, only ever compared with each other (they may be below zero, on a
 * machine whose clock is set back).
 */
const ownClock = globalThis.performance ?? Date;

/** What the store answered `get(key)`: a string or null; else a `StoreError`. */
function checkRead(key, value) {
  if (value !== null && typeof value !== 'string') {
    throw new StoreError(`the store answered get(${key}) with ${kind(value)}: expected a string or null`);
  }
  return value;
}

/** What the store answered `compareAndSet(key, …)`: `{ ok: true }` or `{ ok: false, current }`; else a `StoreError`. */
function checkWritten(key, answer) {
  const expected = 'expected { ok: true } or { ok: false, current }';
  let ok;
  let current;
  if (answer !== null && typeof answer === 'object') {
    try {
      // read once each (a getter may answer otherwise the next time)
      ok = answer.ok;
      current = answer.current;
    } catch (error) {
      const why = error?.message ?? String(error);
      const threw = `the store answered compareAndSet(${key}) with an object that threw (${why})`;
      throw new StoreError(`${threw}: ${expected}`, { cause: error });
    }
  }
  if (ok === true) return { ok };
  if (ok === false && (current === null || typeof current === 'string')) return { ok, current };
  throw new StoreError(`the store answered compareAndSet(${key}) with ${kind(answer)}: ${expected}`);
}

/** The record's key and the robots.txt row's key of a host, in the store (the store adds its prefix). */
const recordKey = (host) => `host:${host}`;
const rulesKey = (host) => `robots:${host}`;

/** What this process knows of one host: its record as last written, and its calls in order. */
class HostEntry {
  /** The key of the host's record in the store. */
  key;
  /** The record this process last wrote: a string, null (none), or undefined (not known: read it). */
  record = undefined;
  /**
   * Whether this process's core holds the host as `record` has it: its last decision on the host is the record
   * it wrote, and nothing has changed the host in the core since (so the record need not be adopted again), as
   * long as the core has evicted no host since then (`heldEvictions`, its count of evictions at the time).
   */
  held = false;
  heldEvictions = 0;
  /** When (`ownClock`) the store lets the record written expire: from then on it is as none. */
  expiresAtMs = Infinity;
  /**
   * The last departure this process made while pacing the host on its own ('local'), on this process's clock
   * (`platformMs`: the offset to the store's may not be known yet; it is added when the departure is handed over).
   */
  localDepartureMs = undefined;
  /** The end of a cooldown this process learned while pacing the host on its own, on this process's clock. */
  localHeldUntilMs = undefined;
  /**
   * The shared permits given back while the store was out of reach: permit id → the URL it was given for. They are
   * given back to the shared state by the next decision on the host through the store.
   */
  releasesDue = undefined;
  /** The permits taken while the host was paced on its own and not given back yet (the local copy's numbers). */
  localPermits = undefined;
  /** Whether the host is paced on its own ('local') since its record was last written. */
  onItsOwn = false;
  /** The calls about this host, one after another: the last one's promise (while `calls` > 0). */
  tail = undefined;
  /** Calls queued or running. */
  calls = 0;

  constructor(host) {
    this.key = recordKey(host);
  }

  /**
   * Whether nothing about the host is left here: no call under way, no record this process wrote that the store
   * still holds (none written, expired, or not known since the store failed: as for a host never seen), nothing to
   * hand over from pacing it on its own.
   */
  idle() {
    const handed =
      this.localDepartureMs === undefined && this.localHeldUntilMs === undefined && this.releasesDue === undefined;
    return this.calls === 0 && handed && !this.localPermits?.size && typeof this.cached() !== 'string';
  }

  /** The record the store holds, as far as this process knows: undefined when it must be read. */
  cached() {
    if (this.record !== undefined && ownClock.now() >= this.expiresAtMs) return null; // expired in the store too
    return this.record;
  }

  /** `record` was written with `ttlMs` (measured from the answer: the store's expiry comes no later). */
  keep(record, ttlMs) {
    this.record = record;
    this.expiresAtMs = record === null ? Infinity : ownClock.now() + ttlMs;
  }
}

export class SharedLimiter {
  #raw;
  #local;
  #store;
  #fleetSize;
  #onStoreError;
  #storeTimeoutMs;
  #storeWaitMs;
  #onStoreWarning;
  /** The deadlines of calls to the store (`storeTimeoutMs`). */
  #deadlines;
  #hosts = new Map();
  /** The best sample of the store's clock: its offset, round trip and when it was taken. */
  #clock = undefined;
  #clockRefresh = undefined;
  #clockFirst = undefined;
  /** When (`ownClock`) the store's clock is due to be sampled again: `CLOCK_REFRESH_MS` after the last sample. */
  #clockDueMs = -Infinity;
  /** Until when (`ownClock`) calls go without asking the store, after it failed ('local'). */
  #storeDownUntil = -Infinity;
  /** Hosts with permits given back while the store was out of reach, to hand over once it answers. */
  #owed = new Set();
  /** The hand-over of `#owed` under way. */
  #paying = undefined;

  /**
   * A limiter whose hosts are shared through `config.store` with every process using the same store (and prefix).
   * `config` is a `Limiter`'s config plus `store`, `fleetSize` (processes sharing it), `onStoreError` (`'local'`
   * or `'wait'`), `storeTimeoutMs`, `storeWaitMs` and `onStoreWarning`; a bad one throws a TypeError naming it.
   */
  constructor(config) {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw new TypeError(`invalid config: expected an object with store and fleetSize, got ${kind(config)}`);
    }
    const { store, fleetSize, onStoreError, storeTimeoutMs, storeWaitMs, onStoreWarning, ...limiterConfig } = config;
    this.#store = storeArg(store);
    const fleet = 'the number of processes sharing the store (1 to 10000)';
    this.#fleetSize = wholeOption(fleetSize, 'fleetSize', 1, 10_000, undefined, fleet);
    this.#onStoreError = onStoreError ?? 'local';
    if (!ON_STORE_ERROR.includes(this.#onStoreError)) {
      throw new TypeError(`invalid config field onStoreError: expected "local" or "wait", got ${kind(onStoreError)}`);
    }
    this.#storeTimeoutMs = wholeOption(storeTimeoutMs, 'storeTimeoutMs', 1, 60_000, 1000, 'milliseconds (1 to 60000)');
    this.#deadlines = new Deadlines(this.#storeTimeoutMs);
    this.#storeWaitMs = wholeOption(storeWaitMs, 'storeWaitMs', 0, 2 ** 31 - 1, 60_000, 'milliseconds');
    if (onStoreWarning !== undefined && typeof onStoreWarning !== 'function') {
      throw new TypeError(`invalid config field onStoreWarning: expected a function, got ${kind(onStoreWarning)}`);
    }
    this.#onStoreWarning = onStoreWarning;
    this.#raw = new RawLimiter(limiterConfig);
    // (the fleet's share refuses what a store shared by several processes does not do: groupBy 'site')
    this.#local = thrown(RawLimiter.fleetShare(limiterConfig, this.#fleetSize));
  }

  /** Free the core's memory now. */
  free() {
    this.#raw.free();
    this.#local.free();
  }

  get warnings() {
    return this.#raw.warnings;
  }

  get userAgent() {
    return this.#raw.userAgent;
  }

  /** Processes sharing the store, as configured. */
  get fleetSize() {
    return this.#fleetSize;
  }

  /**
   * Hosts this process keeps an entry for: a record it wrote, a call under way, or what it learned on its own to
   * hand over. One whose record has expired since is let go as hosts are added.
   */
  get hostsKept() {
    return this.#hosts.size;
  }

  /** Milliseconds the store's clock is ahead of this process's (`undefined` before the first call measured it). */
  get clockOffsetMs() {
    return this.#clock?.offsetMs;
  }

  // ---- the store's clock ----

  /** The offset to the store's clock as known so far (0 before it was measured: this limiter's cores run on it). */
  #offsetMs() {
    return this.#clock?.offsetMs ?? 0;
  }

  /** `localMs` (default: now) on this process's clock, moved to the store's (as it is known so far). */
  #storeMs(localMs = platformMs()) {
    return localMs + this.#offsetMs();
  }

  /** One sample of the store's clock: its offset from the platform's, and the round trip it took. */
  async #sampleClock() {
    const sent = platformMs();
    const storeMs = await this.#call('timeMs', '', () => this.#store.timeMs());
    const came = platformMs();
    if (typeof storeMs !== 'number' || !Number.isFinite(storeMs) || storeMs < 0) {
      throw new StoreError(`the store answered timeMs() with ${kind(storeMs)}: expected milliseconds since the epoch`);
    }
    this.#clockDueMs = ownClock.now() + CLOCK_REFRESH_MS;
    return { offsetMs: storeMs - (sent + came) / 2, roundTripMs: came - sent, atMs: came };
  }

  /** Keep `sample` when its round trip is the shortest of the samples still young enough. */
  #keepSample(sample) {
    const best = this.#clock;
    if (!best || sample.roundTripMs <= best.roundTripMs || sample.atMs - best.atMs > CLOCK_SAMPLE_LIFE_MS) {
      try {
        thrown(this.#raw.setClockOffset(sample.offsetMs));
        thrown(this.#local.setClockOffset(sample.offsetMs));
      } catch (error) {
        const off = `${Math.round(sample.offsetMs)} ms off this process's`;
        throw new StoreError(`the store's clock (timeMs) is ${off}: ${error?.message}`, { cause: error });
      }
      this.#clock = sample;
    }
  }

  /** Whether the offset to the store's clock is measured and not due to be again (else `#clockReady` sees to it). */
  #clockFresh() {
    return this.#clock !== undefined && ownClock.now() < this.#clockDueMs;
  }

  /** The offset to the store's clock measured (at the first call), and refreshed in the background after. */
  async #clockReady() {
    if (this.#clock) {
      if (!this.#clockFresh() && !this.#clockRefresh) {
        this.#clockRefresh = this.#sampleClock()
          .then((sample) => this.#keepSample(sample))
          .catch((error) => this.#warn(error))
          .finally(() => (this.#clockRefresh = undefined));
      }
      return;
    }
    this.#clockFirst ??= (async () => {
      try {
        for (let i = 0; i < CLOCK_SAMPLES; i++) this.#keepSample(await this.#sampleClock());
      } finally {
        this.#clockFirst = undefined;
      }
    })();
    await this.#clockFirst;
  }

  // ---- calls to the store ----

  /**
   * `run()` (a call to the store), bounded by `storeTimeoutMs`; any failure of it is a `StoreError`. Its answer
   * goes through `check(answer)` (which throws a `StoreError` for one the store should not give).
   */
  #call(operation, key, run, check) {
    return new Promise((resolve, reject) => {
      const token = this.#deadlines.start(() => {
        const bound = `storeTimeoutMs (${this.#storeTimeoutMs} ms)`;
        reject(new StoreError(`the store's ${operation}(${key}) took longer than ${bound}`));
      });
      const fail = (error) => {
        if (!this.#deadlines.settle(token)) return;
        if (error instanceof StoreError) return reject(error);
        const why = error?.message ?? String(error);
        reject(new StoreError(`the store's ${operation}(${key}) failed: ${why}`, { cause: error }));
      };
      const answer = (value) => {
        if (!this.#deadlines.settle(token)) return;
        try {
          resolve(check === undefined ? value : check(key, value));
        } catch (error) {
          reject(error);
        }
      };
      try {
        Promise.resolve(run()).then(answer, fail);
      } catch (error) {
        fail(error);
      }
    });
  }

  #get(key) {
    return this.#call('get', key, () => this.#store.get(key), checkRead);
  }

  #compareAndSet(key, expected, value, ttlMs) {
    const run = () => this.#store.compareAndSet(key, expected, value, ttlMs);
    return this.#call('compareAndSet', key, run, checkWritten);
  }

  /** Tell `onStoreWarning` of a fault this limiter rode out. */
  #warn(error) {
    if (this.#onStoreWarning) {
      try {
        this.#onStoreWarning(error);
      } catch (_) {
        // the caller's handler failing changes nothing here
      }
    }
  }

  // ---- decisions through the store ----

  #entry(host) {
    let entry = this.#hosts.get(host);
    if (!entry) {
      this.#sweep();
      this.#hosts.set(host, (entry = new HostEntry(host)));
    }
    return entry;
  }

  /**
   * Look at the two hosts kept longest: forget each that is idle (its record expired since its last call), and
   * put the others last. Done for each host added, so that the hosts kept stay about those whose record lives.
   */
  #sweep() {
    for (let i = 0; i < 2 && this.#hosts.size > 0; i++) {
      const [host, entry] = this.#hosts.entries().next().value;
      this.#hosts.delete(host);
      if (!entry.idle()) this.#hosts.set(host, entry);
    }
  }

  /**
   * `#turn(…)` after the calls about `host` before it (at once when there are none), so that this process never
   * races itself on a record.
   */
  #inTurn(host, decide, options) {
    const entry = this.#entry(host);
    const go = () => this.#turn(host, entry, decide, options);
    const turn = entry.calls++ === 0 ? go() : entry.tail.then(go, go);
    entry.tail = turn;
    return turn;
  }

  /**
   * Adopt `record` (the store's, or null) as `host`'s state in this process's core, reading its rules if needed:
   * what is left to do after `adopted`, the core's answer to adopting it without its rules (false: they must be
   * read; an Error: it cannot be read). When the record cannot be read, the host is rebuilt, and the answer is the
   * rebuilt state as a record (else undefined).
   */
  async #adopt(host, record, adopted) {
    try {
      if (thrown(adopted)) return;
      const rules = await this.#get(rulesKey(host));
      try {
        thrown(this.#raw.adoptHost(host, record, rules));
      } catch (error) {
        if (error?.name !== 'HostRecordUnreadable') throw error;
        // rules that cannot be read are as none: robots.txt is fetched again
        this.#warn(error);
        thrown(this.#raw.adoptHost(host, record, null));
      }
    } catch (error) {
      if (error?.name !== 'HostRecordUnreadable') throw error;
      // a record that cannot be read: rebuilt as though a request had just left (from nothing: what the core held
      // may be a decision that lost its compare-and-set), and written over
      this.#warn(error);
      thrown(this.#raw.adoptHost(host, null));
      thrown(this.#raw.departedElsewhere(host));
      return thrown(this.#raw.hostRecord(host))?.record ?? null;
    }
    return undefined;
  }

  /**
   * A decision on `host` was not written (the store failed): the core holds the host as `before` (the state it
   * decided from, as a record) has it again, so that a process going on alone starts from what the fleet knows, not
   * from a decision no one else saw. A record naming a robots.txt copy the core no longer holds (one fetched
   * meanwhile) is taken without its rules, which are read again.
   */
  #undo(host, before) {
    if (this.#raw.adoptHost(host, before) === false) this.#raw.adoptHost(host, before, null);
  }

  /**
   * `decide(raw)` on `host`'s shared state: adopt its record, decide, write the new record back by
   * compare-and-set, again on the record that won when another process wrote first. `rows(raw, next)` may name a
   * robots.txt row to write before the record (`next`: the record to write, as `hostRecord` answered it). What
   * `decide` answers or throws.
   */
  async #shared(host, entry, decide, rows) {
    if (!this.#clockFresh()) await this.#clockReady();
    // a host this process has not written yet is taken to have no record: when it has one, the compare-and-set
    // answers it, so a first decision costs no more round trips than reading it first would
    let record = entry.cached() ?? null;
    for (let tries = 1; ; tries++) {
      // the state deciding starts from, as a record: `record`, or what an unreadable one was rebuilt as
      let before = record;
      const held = entry.held && record !== null && record === entry.record;
      if (!held || this.#raw.hostsEvicted !== entry.heldEvictions) {
        entry.held = false;
        const adopted = this.#raw.adoptHost(host, record);
        if (adopted !== true) before = (await this.#adopt(host, record, adopted)) ?? record;
      }
      // deciding changes the host in the core: it holds a record again once the record is written
      entry.held = false;
      this.#handOver(host, entry);
      let answer;
      let failure;
      try {
        answer = decide(this.#raw);
      } catch (error) {
        failure = error;
      }
      const next = thrown(this.#raw.hostRecord(host));
      const evictions = this.#raw.hostsEvicted;
      const row = rows?.(this.#raw, next);
      const value = next === undefined ? null : next.record;
      const ttlMs = next === undefined ? 1 : Math.max(1, Math.ceil(next.keepMs));
      let written;
      try {
        if (row) await this.#call('set', rulesKey(host), () => this.#store.set(rulesKey(host), row.text, row.keepMs));
        written = await this.#compareAndSet(entry.key, record, value, ttlMs);
      } catch (error) {
        this.#undo(host, before);
        throw error;
      }
      if (written.ok) {
        entry.keep(value, ttlMs);
        entry.held = true;
        entry.heldEvictions = evictions;
        entry.localDepartureMs = undefined;
        entry.localHeldUntilMs = undefined;
        entry.releasesDue = undefined;
        entry.onItsOwn = false;
        this.#owed.delete(host);
        if (this.#owed.size > 0) this.#payOwed();
        if (failure !== undefined) throw failure;
        return answer;
      }
      if (tries >= CONFLICT_TRIES) {
        entry.record = undefined;
        throw new StoreError(`${host}: its record changed under ${tries} compare-and-sets in a row`);
      }
      if (tries < EAGER_TRIES) {
        // the record that won is the newest there is: decide again on it at once
        record = written.current;
      } else {
        // many processes on one host: step aside a random moment, then read what won meanwhile
        await sleep(Math.random() * tries);
        record = await this.#get(entry.key);
      }
      entry.record = undefined;
    }
  }

  /**
   * What `entry` learned while the host was paced on its own, handed to the host's shared state in the core: its
   * last departure, a cooldown, the shared permits given back (on this process's clock until now: moved to the
   * store's, whose offset is known once the store answered).
   */
  #handOver(host, entry) {
    const storeMs = (localMs) => (localMs === undefined ? undefined : localMs + this.#offsetMs());
    if (entry.localDepartureMs !== undefined || entry.localHeldUntilMs !== undefined) {
      const at = storeMs(entry.localDepartureMs);
      thrown(this.#raw.departedElsewhere(host, at, storeMs(entry.localHeldUntilMs)));
    }
    // (a permit the shared state no longer holds is given back by its lease already)
    for (const [permitId, url] of entry.releasesDue ?? []) thrown(this.#raw.release(url, permitId));
  }

  /**
   * `decide(raw)` on this process's own share of the policy (the store is out of reach). The host starts there
   * from what this process last knew of its shared state (a cooldown, departures reserved), and a cooldown
   * learned there is handed to the shared state with the last departure. A permit taken there is numbered
   * below zero (its own numbering), so that `release` gives it back there.
   */
  #onItsOwn(host, entry, decide, departs) {
    if (!entry.onItsOwn) {
      // (a copy holding permits taken on its own in an earlier outage, not given back yet, is kept: the shared
      // state never knew of them, and its numbering would hand their numbers out again)
      if (!entry.localPermits?.size) {
        const known = thrown(this.#raw.hostRecord(host));
        thrown(this.#local.adoptHost(host, known?.record ?? null, null));
      }
      entry.onItsOwn = true;
    }
    try {
      const decided = decide(this.#local);
      const permitId = permitOf(decided);
      if (permitId !== undefined) (entry.localPermits ??= new Set()).add(permitId);
      const answer = ownPermits(decided);
      // the local core runs on the store's clock as known (`#offsetMs`): its instants are kept on this process's
      const at = departs ? departsAt(answer, this.#storeMs()) : undefined;
      if (at !== undefined) {
        entry.localDepartureMs = Math.max(entry.localDepartureMs ?? -Infinity, at - this.#offsetMs());
      }
      return answer;
    } finally {
      const left = this.#local.stats(host)?.cooldownRemainingMs;
      if (left > 0) {
        const until = platformMs() + left;
        entry.localHeldUntilMs = Math.max(entry.localHeldUntilMs ?? -Infinity, until);
      }
    }
  }

  /**
   * `decide(raw)` about `host`: through the store, or, while it fails, as `onStoreError` says. `departs`: the
   * decision may send a request (counted when paced on its own). `signal` bounds a wait for the store.
   */
  #decide(url, decide, options) {
    return this.#inTurn(thrown(this.#raw.hostOf(url)), decide, options);
  }

  /**
   * A shared permit given back while the store is out of reach (`{ permitId, url }`): given back to the shared
   * state once the store answers (by the next decision on the host, or `#payOwed`).
   */
  #owe(host, entry, { permitId, url }) {
    (entry.releasesDue ??= new Map()).set(permitId, url);
    this.#owed.add(host);
  }

  /**
   * The store answered: hand the permits given back while it was out of reach to the shared state, host by host
   * in the background (a decision that decides nothing; `#shared` hands them over), until one fails.
   */
  #payOwed() {
    this.#paying ??= (async () => {
      try {
        for (const host of this.#owed) {
          this.#owed.delete(host);
          const entry = this.#hosts.get(host);
          if (entry?.releasesDue === undefined) continue;
          try {
            await this.#inTurn(host, () => undefined, {});
          } catch (error) {
            this.#warn(error);
          }
          if (entry.releasesDue !== undefined) {
            this.#owed.add(host); // not handed over (the store failed again): at the next answer
            break;
          }
        }
      } finally {
        this.#paying = undefined;
      }
    })();
  }

  /** `#decide`'s call about `host` (whose entry is `entry`), in its turn. */
  async #turn(host, entry, decide, { departs = false, rows, signal, releases } = {}) {
    const alone = () => {
      const answer = this.#onItsOwn(host, entry, decide, departs);
      if (releases) this.#owe(host, entry, releases);
      return answer;
    };
    try {
      const started = ownClock.now();
      for (;;) {
        if (this.#onStoreError === 'local' && ownClock.now() < this.#storeDownUntil) return alone();
        try {
          return await this.#shared(host, entry, decide, rows);
        } catch (error) {
          if (!(error instanceof StoreError)) throw error;
          this.#warn(error);
          entry.record = undefined; // read again once the store answers
          this.#storeDownUntil = ownClock.now() + STORE_RETRY_MS;
          if (this.#onStoreError === 'local') return alone();
          // a permit given back is not held for the store: it only frees the fleet (given back once it answers)
          if (releases) return this.#owe(host, entry, releases);
          if (ownClock.now() - started + STORE_RETRY_MS > this.#storeWaitMs) throw error;
          await sleep(STORE_RETRY_MS, signal);
        }
      }
    } finally {
      // a host with nothing left here is forgotten
      entry.calls--;
      if (entry.idle() && this.#hosts.get(host) === entry) {
        this.#hosts.delete(host);
        entry.tail = undefined;
      }
    }
  }

  // ---- the Limiter shape ----

  /**
   * Reserve a departure to `url`'s host in the fleet's shared budget:
   * `{ host, waitMs, layer, departsMs, reserved, permitId? }`.
   */
  async acquire(url, nowMs, options) {
    const checked = urlArg(url);
    noInstant(nowMs, 'nowMs');
    const signal = signalArg(options);
    return capped(await this.#decide(checked, (raw) => thrown(raw.acquire(checked)), { departs: true, signal }));
  }

  /** When could a request to `url`'s host go, by this process's latest copy of the host's state (no store call). */
  peek(url, nowMs) {
    noInstant(nowMs, 'nowMs');
    return thrown(this.#raw.peek(urlArg(url)));
  }

  /** The next step of a visit to `url` (see `Limiter.visit`), decided on the host's shared state. */
  async visit(url, nowMs, maxWaitMs, options) {
    const checked = urlArg(url);
    noInstant(nowMs, 'nowMs');
    if (maxWaitMs !== undefined && typeof maxWaitMs !== 'number') {
      throw new TypeError(`invalid maxWaitMs: expected a number or undefined, got ${kind(maxWaitMs)}`);
    }
    const signal = signalArg(options);
    const visit = (raw) => thrown(raw.visit(checked, undefined, maxWaitMs));
    const turn = await this.#decide(checked, visit, { departs: true, signal });
    return turn.turn === 'go' || turn.turn === 'fetchRobots' ? { ...turn, decision: capped(turn.decision) } : turn;
  }

  /** Confirm a departure reserved for `departsMs` (see `Limiter.depart`), on the host's shared state. */
  async depart(url, departsMs, options) {
    const checked = urlArg(url);
    if (departsMs !== undefined && typeof departsMs !== 'number') {
      throw new TypeError(`invalid departsMs: expected a number or undefined, got ${kind(departsMs)}`);
    }
    const signal = signalArg(options);
    return this.#decide(checked, (raw) => thrown(raw.depart(checked, departsMs)), { departs: true, signal });
  }

  /**
   * A request confirmed by `depart` was written only at `atMs` (default: now), read on this process's clock
   * (`performance.timeOrigin + performance.now()`, as `hostpace/crawlee` measures it) and moved to the store's.
   */
  async sent(url, atMs) {
    const checked = urlArg(url);
    if (atMs !== undefined && atMs !== null && typeof atMs !== 'number') {
      throw new TypeError(`invalid atMs: expected a number or undefined, got ${kind(atMs)}`);
    }
    const at = typeof atMs === 'number' ? this.#storeMs(atMs) : undefined;
    return this.#decide(checked, (raw) => thrown(raw.sent(checked, at)));
  }

  /**
   * Give back a concurrency permit, and wake this process's calls waiting for one. A permit taken while this
   * process paced the host on its own (numbered below zero) is given back there; a shared one in the host's shared
   * state (and, while the store is out of reach, in this process's copy, and to the shared state once it answers:
   * a release is never held for the store).
   */
  async release(url, permitId) {
    const checked = urlArg(url);
    try {
      if (typeof permitId === 'number' && permitId < 0) {
        thrown(this.#local.release(checked, -permitId));
        this.#hosts.get(thrown(this.#raw.hostOf(checked)))?.localPermits?.delete(-permitId);
        return;
      }
      const give = (raw) => thrown(raw.release(checked, permitId));
      await this.#decide(checked, give, { releases: { permitId, url: checked } });
    } finally {
      wake(this);
    }
  }

  /** Learn from a response to a request for `url` (see `Limiter.observe`), in the host's shared state. */
  async observe(url, response, latencyMs, nowMs, options) {
    const checked = urlArg(url);
    noInstant(nowMs, 'nowMs');
    const signal = signalArg(options);
    return this.#decide(checked, (raw) => thrown(raw.observe(checked, response, latencyMs)), { signal });
  }

  /** Learn that a request to `url` got no response (see `Limiter.observeFailure`), in the host's shared state. */
  async observeFailure(url, options) {
    const checked = urlArg(url);
    const signal = signalArg(options);
    return this.#decide(checked, (raw) => thrown(raw.observeFailure(checked)), { signal });
  }

  /** What to do after attempt `attempts` answered `status` (the core's verdict; no store call). */
  retryVerdict(status, attempts) {
    return thrown(this.#raw.retryVerdict(status, attempts));
  }

  /**
   * A fetch of `host`'s robots.txt answered (see `Limiter.robotsFetched`): learned in the host's shared state,
   * and a 2xx's rules written to the store for the fleet.
   */
  async robotsFetched(host, status, robotsTxt, userAgent, nowMs, fetch) {
    noInstant(nowMs, 'nowMs');
    const checked = urlArg(host);
    // a row only for rules this report installed: a report of a fetch no longer under way (answered
    // `undefined`) or of another status leaves the copy in force, whose row is another's text
    let learned;
    const rows = (raw, record) => {
      if (learned === undefined || !(status >= 200 && status < 300)) return undefined;
      const text = thrown(raw.robotsRow(checked, typeof robotsTxt === 'string' ? robotsTxt : ''));
      if (text === undefined || record === undefined) return undefined;
      return { text, keepMs: Math.max(1, Math.ceil(record.keepMs)) };
    };
    const learn = (raw) => {
      learned = undefined;
      return (learned = thrown(raw.robotsFetched(checked, status, robotsTxt, userAgent, undefined, fetch)));
    };
    return this.#decide(checked, learn, { rows });
  }

  /** A host's state and counters in the fleet's shared state (`undefined` if no process keeps any). */
  async stats(host, nowMs) {
    const checked = urlArg(host);
    noInstant(nowMs, 'nowMs');
    return this.#decide(checked, (raw) => thrown(raw.stats(checked)));
  }

  /** Wait for `url`'s host's turn in the fleet, run `task`, learn from its result, release its permit. */
  async schedule(url, task, options) {
    return scheduleOnTurns(this, url, task, options);
  }

  /** A polite `fetch(url, init)` paced by the fleet's shared budget (see `Limiter.fetch`). */
  async fetch(input, init) {
    return fetchOnTurns(this, input, init);
  }
}

/**
 * When the request `answer` lets go departs, in the store's clock (`nowMs` being now): a decision's or a turn's
 * reserved instant, or now for a confirmed departure; `undefined` when nothing was let go.
 */
function departsAt(answer, nowMs) {
  const decision = answer?.decision ?? answer;
  if (decision?.reserved) return decision.departsMs;
  if (answer && answer.waitMs === 0 && 'held' in answer) return nowMs;
  return undefined;
}

/**
 * `answer` (a decision, or a visit's turn with one) with its permit, taken by this process on its own, numbered
 * below zero: its own numbering, apart from the shared state's.
 */
function ownPermits(answer) {
  if (permitOf(answer) === undefined) return answer;
  if (answer.decision !== undefined) return { ...answer, decision: ownPermits(answer.decision) };
  return { ...answer, permitId: -answer.permitId };
}

/** The number of the permit `answer` (a decision, or a visit's turn with one) took; undefined when none. */
function permitOf(answer) {
  const permitId = answer?.permitId ?? answer?.decision?.permitId;
  return typeof permitId === 'number' ? permitId : undefined;
}

/**
 * A decision whose wait for a permit is capped by the core's `SHARED_RECHECK`: another process's release is not
 * told to this one, so a call waiting for a permit asks the store again that often.
 */
function capped(decision) {
  if (decision.reserved) return decision;
  return { ...decision, waitMs: Math.min(decision.waitMs, sharedRecheckMs()) };
}

/** `options.signal` of a call: an `AbortSignal` or absent; else a TypeError naming it. */
function signalArg(options) {
  return signalOf(options, 'options');
}

/**
 * An instant a `Limiter` method takes, which a `SharedLimiter` does not: its instants come from the store's clock
 * (the same for the whole fleet). A TypeError unless absent.
 */
function noInstant(value, name) {
  if (value !== undefined && value !== null) {
    const got = kind(value);
    throw new TypeError(`invalid ${name}: a SharedLimiter takes its instants from the store's clock, got ${got}`);
  }
}
