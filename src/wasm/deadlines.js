// `Deadlines`: the deadlines of calls that each wait at most the same time (a store's timeout), kept by one timer.
//
// Every call waits the same `ms`, so the calls' deadlines come in the order the calls started, and the first call
// still waiting has the nearest one. One timer armed for it stands for a timer per call (which the platform would
// make and take apart on every call): when it fires, the calls past their deadline expire, and it is armed again
// for the next one. It holds the process open only while a call waits, as a timer per call would.

const clock = globalThis.performance ?? Date;

export class Deadlines {
  #ms;
  /** The calls waiting, in the order they started (so by deadline): `{ at, expire }`. */
  #waiting = new Set();
  #timer = undefined;

  /** Deadlines `ms` milliseconds after each call starts. */
  constructor(ms) {
    this.#ms = ms;
  }

  /** A call starts: `expire()` runs at its deadline, unless `settle` came first. Its token for `settle`. */
  start(expire) {
    const token = { at: clock.now() + this.#ms, expire };
    this.#waiting.add(token);
    if (this.#timer === undefined) this.#timer = setTimeout(this.#fire, this.#ms);
    else if (this.#waiting.size === 1) this.#timer.ref?.();
    return token;
  }

  /** Whether the call of `token` still waits (its deadline has not passed, and it has not settled). */
  waits(token) {
    return this.#waiting.has(token);
  }

  /** The call of `token` is over: true when it still waited, false when it had expired (or settled). */
  settle(token) {
    if (!this.#waiting.delete(token)) return false;
    if (this.#waiting.size === 0) this.#timer?.unref?.();
    return true;
  }

  #fire = () => {
    this.#timer = undefined;
    const now = clock.now();
    for (const token of this.#waiting) {
      if (token.at > now) {
        this.#timer = setTimeout(this.#fire, token.at - now);
        return;
      }
      this.#waiting.delete(token);
      token.expire();
    }
  };
}
