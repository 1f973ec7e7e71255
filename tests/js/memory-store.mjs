// A `SharedStore` in this process's memory, for the SharedLimiter tests that need exact control over the store:
// its clock may run `skewMs` off this process's, it counts each call by name, and `fail` makes every call reject
// (a store out of reach) until cleared. Expiry is by this process's clock. tests/js/shared-fleet.test.mjs runs the
// same limiter against a real redis-server.

export function memoryStore({ skewMs = 0 } = {}) {
  const data = new Map();
  const calls = { timeMs: 0, get: 0, compareAndSet: 0, set: 0 };
  const live = (key) => {
    const entry = data.get(key);
    if (entry && entry.until <= Date.now()) data.delete(key);
    return data.get(key);
  };
  const store = {
    data,
    calls,
    /** When set, every call rejects with this error. */
    fail: undefined,
    async timeMs() {
      calls.timeMs++;
      if (store.fail) throw store.fail;
      return Date.now() + skewMs;
    },
    async get(key) {
      calls.get++;
      if (store.fail) throw store.fail;
      return live(key)?.value ?? null;
    },
    async compareAndSet(key, expected, value, ttlMs) {
      calls.compareAndSet++;
      if (store.fail) throw store.fail;
      const current = live(key)?.value ?? null;
      if (current !== expected) return { ok: false, current };
      if (value === null) data.delete(key);
      else data.set(key, { value, until: Date.now() + ttlMs });
      return { ok: true };
    },
    async set(key, value, ttlMs) {
      calls.set++;
      if (store.fail) throw store.fail;
      data.set(key, { value, until: Date.now() + ttlMs });
    },
    /** The value of `key`, read without counting a call. */
    peek(key) {
      return live(key)?.value ?? null;
    },
    /** Calls so far, then counted from zero. */
    take() {
      const taken = { ...calls };
      for (const k of Object.keys(calls)) calls[k] = 0;
      return taken;
    },
  };
  return store;
}
