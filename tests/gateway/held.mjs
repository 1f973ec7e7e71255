// What a host that answers its first request 429 + Retry-After should see of a crawler whose departures were
// reserved before the 429 came back: an origin script that does that, and the checks on the origin's access log.
// The core holds every departure reserved before a cooldown and not yet gone, and reserves it again behind the
// cooldown at the host's slower pace (one incident halves the rate; each success after it gives back 1/64 of the
// configured rate, `RECOVERY_SHARE`).

import assert from 'node:assert/strict';

/** The Retry-After of the script's 429, in seconds. */
export const RETRY_AFTER_SEC = 2;

/** The share of the configured rate each success gives back to a host slowed by pushback (the core's). */
const RECOVERY_SHARE = 1 / 64;

/**
 * An origin script: the first request of all (whatever its path) answered 429 + Retry-After: 2 after `delayMs`
 * (so the departures after it are reserved before the crawler learns of the 429: they are held, not refused),
 * every later one 200 at once.
 */
export function firstThrottled(delayMs = 100) {
  let seen = 0;
  return {
    '*': () => {
      seen += 1;
      return seen === 1
        ? { status: 429, headers: { 'Retry-After': String(RETRY_AFTER_SEC) }, body: 'slow down', delayMs }
        : { status: 200, body: 'ok' };
    },
  };
}

/**
 * The checks on `log` (an origin's access log) after a 429 at its first arrival, for a host configured at
 * `ratePerSec` with a burst of 1: nothing else arrives within the Retry-After (less `tolMs`); after it, each
 * arrival comes at least the slowed host's spacing after the one before (less `tolMs`): the halved rate's
 * (`2000 / ratePerSec`), shortened only by what the successes before it gave back. Returns the 429's arrival,
 * the arrivals after it and their gaps (the first measured from the 429).
 */
export function assertHeld(log, { ratePerSec, tolMs, what }) {
  const throttled = log.filter((e) => e.status === 429);
  assert.equal(throttled.length, 1, `${what}: one 429 (${log.map((e) => e.status)})`);
  const t429 = throttled[0].t;
  const times = log.map((e) => e.t).sort((a, b) => a - b);
  assert.equal(times[0], t429, `${what}: the 429 came first`);
  const afterwards = times.filter((t) => t > t429);
  const inside = afterwards.filter((t) => t < t429 + RETRY_AFTER_SEC * 1000 - tolMs);
  assert.deepEqual(
    inside.map((t) => Math.round(t - t429)),
    [],
    `${what}: arrivals within the ${RETRY_AFTER_SEC} s cooldown (ms after the 429)`,
  );
  const gaps = afterwards.map((t, i) => t - (i ? afterwards[i - 1] : t429));
  for (let i = 1; i < afterwards.length; i++) {
    // arrival i was reserved after at most i - 1 successes (every arrival after the 429 is one)
    const level = ratePerSec / 2 + (i - 1) * ratePerSec * RECOVERY_SHARE;
    const spacing = 1000 / level;
    assert.ok(
      gaps[i] >= spacing - tolMs,
      `${what}: arrivals ${i} and ${i + 1} after the cooldown ${gaps[i].toFixed(1)} ms apart, expected >= ` +
        `${spacing.toFixed(1)} - ${tolMs} ms (gaps: ${gaps.map((g) => g.toFixed(1)).join(', ')})`,
    );
  }
  return { t429, afterwards, gaps };
}
