// A typed tour of the package's public API, compiled (never run) by `tsc -p tests/js/types`. Every line that
// should compile does; every `@ts-expect-error` marks misuse the types must reject (an unused one is an error, so
// a declaration that becomes too loose fails the check).

import {
  Frontier,
  HostLimiter,
  LeakyBucket,
  Limiter,
  SlidingWindow,
  TokenBucket,
  audit,
  nowMs,
  type Cooldown,
  type Decision,
  type HostStats,
  type Layer,
  type LimiterConfig,
  type Observation,
  type ResponseLike,
  type RobotsCheck,
  type RobotsOutcome,
  type Turn,
  type ScheduleOptions,
  type Violation,
} from 'hostpace';

// --- configuration ---------------------------------------------------------------------------------------------
const config: LimiterConfig = {
  ratePerSec: 2,
  burstCapacity: 4,
  burstJustification: null,
  minIntervalSec: 0.5,
  quota: { limit: 10_000, windowSec: 86_400 },
  maxConcurrency: 2,
  leaseSec: 60,
  maxBackoffSec: 120,
  maxRetries: 3,
  defaultRetryAfterSec: 30,
  maxCrawlDelaySec: 60,
  maxHosts: 100_000,
  adaptive: { minRatePerSec: 0.1, targetLatencyMs: 500, steps: 8 },
};
const minimal: LimiterConfig = {}; // every field is optional

// @ts-expect-error a rate is a number, not a string
const wrongType: LimiterConfig = { ratePerSec: '2' };
// @ts-expect-error unknown fields are refused (a typo must not fall back to a default)
const typo: LimiterConfig = { ratePerSecond: 2 };
// @ts-expect-error a quota needs both a limit and a window
const halfQuota: LimiterConfig = { quota: { limit: 10 } };

const limiter = new Limiter(config);
const defaults = new Limiter(minimal);
const warnings: string[] = limiter.warnings;
const hosts: number = limiter.size;

// --- decisions -------------------------------------------------------------------------------------------------
const decision: Decision = limiter.acquire('https://example.com/a');
const wait: number = decision.waitMs;
const host: string = decision.host;
const layer: Layer = decision.layer;
const departs: number = decision.departsMs;
const reserved: boolean = decision.reserved;
const permit: number | undefined = decision.permitId;
if (permit !== undefined) limiter.release('https://example.com/a', permit);
const atTime: Decision = limiter.acquire('https://example.com/b', nowMs() + 1000);
const peeked: Decision = limiter.peek('https://example.com/');
// @ts-expect-error waitMs is a number
const waitText: string = decision.waitMs;
// @ts-expect-error layers are a closed set of names
const notALayer: Layer = 'tokens';

function describeLayer(l: Layer): string {
  switch (l) {
    case 'none':
      return 'go';
    case 'interval':
    case 'burst':
    case 'quota':
    case 'cooldown':
    case 'concurrency':
    case 'serverQuota':
    case 'site':
      return `wait (${l})`;
  }
}

// --- polite fetch and schedule ---------------------------------------------------------------------------------
async function politeness(signal: AbortSignal): Promise<void> {
  const res = await limiter.fetch('https://example.com/page', { headers: { 'user-agent': 'bot/1' }, signal });
  const response: Response = res;
  const attempts: number = res.hostpaceAttempts;
  const text: string = await response.text();
  const plain = await limiter.fetch('https://example.com/plain');
  const status: number = plain.status;

  const options: ScheduleOptions = { signal };
  const n: number = await limiter.schedule('https://example.com/x', () => 42, options);
  const viaPromise: string = await limiter.schedule('https://example.com/y', async () => 'done');
  const fetched: Response = await limiter.schedule('https://example.com/z', () => fetch('https://example.com/z'));
  // @ts-expect-error schedule's result has the task's type
  const wrong: string = await limiter.schedule('https://example.com/x', () => 42);
  // @ts-expect-error the task is a function
  await limiter.schedule('https://example.com/x', 42);
  void [attempts, text, status, n, viaPromise, fetched, wrong];
}

// --- learning from responses, robots, stats, snapshots ---------------------------------------------------------
const fromResponse: Observation = limiter.observe('https://example.com/', new Response(null, { status: 429 }));
const parts: ResponseLike = { status: 503, headers: { 'Retry-After': '120' }, latencyMs: 80 };
const fromParts: Observation = limiter.observe('https://example.com/', parts);
const pairs: Observation = limiter.observe('https://example.com/', { status: 200, headers: [['RateLimit', 'r=5']] });
const cooldownUntil: number | undefined = fromParts.cooldownUntilMs;
const [rateBefore, rateAfter]: [number, number] = fromResponse.ratePerSec;
const ignored: string[] = pairs.ignored;
// @ts-expect-error a status is a number
limiter.observe('https://example.com/', { status: '200', headers: {} });

const robots: RobotsOutcome = limiter.setRobots('example.com', 'User-agent: *\nCrawl-delay: 2\n', 'bot');
const interval: number = robots.intervalMs;
const capped: boolean = robots.capped;
// a crawler that carries out its own visits: the visit hands out a numbered fetch, reported with its outcome
const turn: Turn = limiter.visit('https://example.com/a', undefined, 5_000);
if (turn.turn === 'fetchRobots') {
  const timeoutMs: number = turn.timeoutMs;
  const departsMs: number = turn.decision.departsMs;
  limiter.robotsFetched('example.com', 200, 'User-agent: *\nDisallow: /a\n', undefined, undefined, turn.fetch);
  void [timeoutMs, departsMs];
} else if (turn.turn === 'later') {
  const why: string = turn.why;
  void why;
}
// @ts-expect-error a visit's bound is milliseconds
limiter.visit('https://example.com/a', undefined, '5s');
const check: RobotsCheck = limiter.robotsCheck('https://example.com/a');
const rule: string | undefined = check.verdict === 'disallowed' ? check.rule : undefined;
void rule;
limiter.robotsFetched('example.com', 404);
const robotsCrawler = new Limiter({ userAgent: 'mybot/1.0', robots: 'obey', robotsMaxAgeSec: 3600, robotsTimeoutSec: 10 });

const stats: HostStats | undefined = limiter.stats('example.com');
if (stats) {
  const s: number = stats.decisions + stats.throttled + stats.totalWaitMs + stats.waitMsByLayer.cooldown;
  const t: number = stats.tokens + stats.capacity + stats.intervalMs + stats.inFlight + stats.nextDepartureInMs;
  void [s, t];
}
// @ts-expect-error stats may be undefined for an unknown host
const notChecked: number = limiter.stats('unknown.example').decisions;

// politeness groups: the hosts of a site paced as one beside each host's own limits
const bySite = new Limiter({ groupBy: 'site', siteLimits: { ratePerSec: 1, quota: { limit: 100, windowSec: 60 } } });
const siteOf: string | null | undefined = bySite.stats('www.example.com')?.site;
const siteWait: number | undefined = bySite.stats('*.example.com')?.waitMsByLayer.site;
const siteLayer: Layer = 'site';
// @ts-expect-error groupBy is 'host' or 'site'
new Limiter({ groupBy: 'domain' });
// @ts-expect-error siteLimits' knobs are a rule's (a PolicyPatch)
new Limiter({ siteLimits: { ratePerSecond: 1 } });
void [siteOf, siteWait, siteLayer];

const snapshot: string = limiter.snapshot();
const restored: Limiter = Limiter.restore(snapshot);

// --- the frontier ----------------------------------------------------------------------------------------------
const frontier = new Frontier(restored);
const bounded = new Frontier(restored, 10_000);
const pushed: boolean = frontier.push('https://example.com/'); // false: robots.txt disallows it
const refusedByRobots: number = frontier.refused;
frontier.push('https://example.com/important', 10);
const next: string | undefined = frontier.pop();
const taken: string | undefined = frontier.take();
const permitOfTaken: number | undefined = frontier.takenPermitId;
const until: number = frontier.waitMs();
const queued: number = frontier.size;
// @ts-expect-error pop may return undefined
const surely: string = frontier.pop();

// --- primitives with an explicit clock -------------------------------------------------------------------------
const bucket = new TokenBucket(1, 5);
const w1: number = bucket.acquire(0);
const w2: number = bucket.peek();
const tokens: number = bucket.tokens(0);
const capacity: number = bucket.capacity;
const leaky = new LeakyBucket(2000);
const w3: number = leaky.acquire(0);
const slot: number = leaky.nextSlotMs();
const window = new SlidingWindow(3, 1000);
const w4: number = window.acquire(0);
const used: number = window.used(0);
const hostLimiter = new HostLimiter({ minIntervalSec: 2, burstCapacity: 10 });
const w5: number = hostLimiter.acquire(0);
const until2: number = hostLimiter.throttle(5000, 0);
// @ts-expect-error nowMs is a number of milliseconds
bucket.acquire('now');
// @ts-expect-error a capacity is required
new TokenBucket(1);

// explicit resource management: `using` frees the wasm memory at the end of the block
{
  using scratch = new LeakyBucket(100);
  scratch.acquire(0);
}
bucket.free();

// audit: the core's verdict on one host's access log
const violations: Violation[] = audit({ ratePerSec: 1 }, [0, 500], [], 5);
const firstKind: 'interval' | 'burst' | 'quota' | 'cooldown' | undefined = violations[0]?.kind;
const gapOf = (v: Violation): number | undefined => (v.kind === 'interval' ? v.gapMs : undefined);
// @ts-expect-error: departures are numbers
audit(undefined, ['0']);
const cooldown: Cooldown = { startMs: 100, endMs: 400 };
const cooled: Violation[] = audit({ ratePerSec: 1 }, [0, 200], [cooldown]);
// @ts-expect-error: cooldowns are { startMs, endMs }, not flat numbers
audit(undefined, [0], [100, 400]);

// interned hosts: the fast path
const hostId: number = limiter.intern('https://example.com/');
const oneWait: number = limiter.acquireId(hostId, 0);
const batchWaits: Float64Array = limiter.acquireIds(Uint32Array.of(hostId, hostId), Float64Array.of(0, 1));
const reusedWaits: Float64Array = limiter.acquireIds(Uint32Array.of(hostId), null, new Float64Array(1000));
// @ts-expect-error: waits are written into a Float64Array only
limiter.acquireIds(Uint32Array.of(hostId), null, [0]);
// @ts-expect-error: ids are a Uint32Array, not a list of URLs
limiter.acquireIds(['https://example.com/']);

void [
  hostId, oneWait, batchWaits, reusedWaits, violations, firstKind, gapOf,
  defaults, warnings, hosts, wait, host, layer, departs, reserved, atTime, peeked, waitText, notALayer, describeLayer,
  politeness, wrongType, typo, halfQuota, cooldownUntil, rateBefore, rateAfter, ignored, interval, capped, notChecked,
  bounded, next, until, queued, surely, w1, w2, tokens, capacity, w3, slot, w4, used, w5, until2, robotsCrawler,
  pushed, refusedByRobots,
];

// --- GatewayLimiter: the same shape, one budget per host shared through a hostpace gateway ---------------------
import { GatewayError, GatewayLimiter, type GatewayDecision, type GatewayObservation } from 'hostpace';

async function gatewayTour(): Promise<void> {
  const shared = new GatewayLimiter('http://127.0.0.1:8787', 'dev-token');
  const d: GatewayDecision = await shared.acquire('https://example.com/');
  const ms: number = d.waitMs;
  const permit: number | undefined = d.permitId;
  const again: number = await shared.depart('https://example.com/', d);
  const id: string | undefined = d.departureId;
  const seen: GatewayObservation = await shared.observe(
    'https://example.com/',
    { status: 429, headers: { 'retry-after': '3' } },
    undefined,
    { departureId: id },
  );
  const back: { released: boolean } = await shared.release('https://example.com/', d);
  const verdict: 'done' | 'retry' | 'giveUp' | undefined = seen.verdict;
  const n: number = await shared.schedule('https://example.com/', () => 1);
  const res = await shared.fetch('https://example.com/', { signal: AbortSignal.timeout(1000) });
  const attempts: number = res.hostpaceAttempts;
  try {
    await shared.acquire('ftp://example.com/');
  } catch (e) {
    if (e instanceof GatewayError) {
      const code: string = e.code;
      const status: number = e.status;
      void [code, status];
    }
  }
  // @ts-expect-error the token is required
  new GatewayLimiter('http://127.0.0.1:8787');
  void [ms, permit, again, id, back, verdict, n, attempts];
}
void gatewayTour;

// hostpace/redis: a store of a client, its four calls, its errors; and a store of one's own.
import { StoreError, redisStore, type SharedStore } from 'hostpace/redis';
async function storeTour(client: { call(command: string, ...args: string[]): Promise<unknown> }) {
  const store: SharedStore = redisStore(client, { prefix: 'fleet:', timeoutMs: 500 });
  const now: number = await store.timeMs();
  const value: string | null = await store.get('example.com');
  const swapped = await store.compareAndSet('example.com', value, null, 1000);
  const current: string | null | undefined = swapped.ok ? undefined : swapped.current;
  const done: void = await store.set('example.com', 'v', 1000);
  try {
    await store.get('example.com');
  } catch (e) {
    if (e instanceof StoreError) {
      const operation: 'timeMs' | 'get' | 'compareAndSet' | 'set' = e.operation;
      const key: string | null = e.key;
      void [operation, key];
    }
  }
  const own: SharedStore = {
    timeMs: async () => Date.now(),
    get: async () => null,
    compareAndSet: async () => ({ ok: false, current: null }),
    set: async () => {},
  };
  // @ts-expect-error a client has a call or sendCommand method
  redisStore({ get: async () => null });
  // @ts-expect-error compareAndSet answers ok or the current value, nothing else
  const bad: SharedStore = { ...own, compareAndSet: async () => ({ ok: 'yes' }) };
  void [now, current, done, bad];
}
void storeTour;

