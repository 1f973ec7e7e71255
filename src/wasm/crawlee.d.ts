// Types of `hostpace/crawlee` (src/wasm/crawlee.js), copied into the npm package by scripts/build-pkg.sh. Crawlee's
// own types are not imported (the package does not depend on Crawlee): the crawler and the crawling context are
// described by the few members used.
import type { Limiter } from './hostpace.js';
import type { SharedLimiter } from './shared-limiter.js';

/** Options of `withHostpace`. */
export interface HostpaceCrawleeOptions {
  /**
   * The longest wait for a host's turn spent inside a Crawlee task, in milliseconds (default 1000). A request whose
   * host's next turn is further away is set aside — its task ends and its concurrency slot is free for other
   * hosts — and handed back to the front of the queue `holdMs` before that turn. Smaller values free slots sooner
   * but cost more set-aside rounds; below Crawlee's pickup delay (its pool starts a task at once when told, else
   * every 0.5 s) a request may come back after its turn and so leave later than it could have.
   */
  holdMs?: number;
  /**
   * How many requests of one host may be in Crawlee tasks at once, from the moment they are let in to wait for
   * their turn until their response's headers are in (default 1); the others are set aside and handed back one by
   * one as those responses come in. Each such request holds one of the crawler's `maxConcurrency` slots, waiting
   * for its turn for at most about `holdMs`. With 1, nothing is reserved for a host before its last response was
   * observed, so a 429 is always seen before the next request's turn is taken; raise it for hosts paced faster than
   * one request per response time (a request whose host began to cool down after its turn was reserved is then
   * not sent, and fails its attempt with `HostThrottled` to go again after the cooldown).
   */
  perHost?: number;
}

/** The members of a Crawlee crawling context `sendPaced` uses. */
export interface PacedContext {
  request: { url: string; id?: string; uniqueKey: string; retryCount: number; noRetry: boolean };
  crawler: object;
}

/**
 * Pace a Crawlee 3.x crawler by a hostpace `Limiter` (or a `SharedLimiter`, for a fleet), per host; returns the
 * same crawler.
 *
 * - `HttpCrawler`, and the crawlers built on it (`CheerioCrawler`, `JSDOMCrawler`, `LinkeDOMCrawler`): a
 *   pre-navigation hook (the last one) adds a hook to got's `beforeRequest` that waits for the request's host's
 *   turn — robots.txt first, fetched through the host's pacing once a day — after got-scraping has prepared the
 *   request, so that the request is written at its departure; a post-navigation hook (the first one) reports the
 *   response to the limiter (429/503 + Retry-After, RateLimit headers, latency). Nothing else to add.
 * - `BasicCrawler` (no navigation: the `requestHandler` sends): send through `sendPaced(context, task)`.
 *
 * Outcomes, as Crawlee sees them:
 * - a URL robots.txt disallows is never sent: the request fails without retries (`request.noRetry`, an error
 *   named `RobotsDisallowed` with `url` and `rule`, to `failedRequestHandler`); so does every URL of a host whose
 *   robots.txt is unreachable (5xx, 429, no answer: `RobotsUnavailable`);
 * - a 429 or 503 cools the host down (Retry-After, capped by the limiter's `maxBackoffSec`) and fails the attempt
 *   with an error named `HostThrottled`: Crawlee retries the request (within its `maxRequestRetries`), and the
 *   retry waits for the end of the cooldown without holding a slot; once the limiter's `maxRetries` are spent the
 *   request fails without further retries.
 *
 * Where the wait happens, and what it costs `maxConcurrency`: a Crawlee task holds one concurrency slot from the
 * moment it takes a request until the request is handled, so a request waiting in a hook holds its slot. Only a
 * request whose host's turn is at most `holdMs` away, and only `perHost` requests of a host at a time (from then
 * until their response's headers), are let into a task; any other is set aside through Crawlee's `delayRequest`
 * (as Crawlee's own `sameDomainDelaySecs` does): its task ends at once, it stays locked in the queue, and it is
 * handed back to the front of the queue `holdMs` before its host's turn, or when a response of its host comes in.
 * So a host costs at most `perHost` slots (by default one), waiting at most about `holdMs` (1 s) each — on first
 * contact, also for the fetch of its robots.txt — and then downloading; a throttled or slowly paced host never
 * holds up the others. Give the crawler a `maxConcurrency` of at least the number of hosts crawled side by side
 * (times `perHost`), and a `minConcurrency` as high if it should not start with one task (Crawlee's pool grows
 * only every 10 s). A set-aside round costs a task that ends at once (a queue read and write, in memory).
 *
 * Limits: the wait is inside got's request, so it counts against Crawlee's `navigationTimeoutSecs` (30 s by
 * default; a host's first robots.txt may take up to the limiter's `robotsTimeoutSec`); redirects are followed by
 * Crawlee's HTTP client within the one departure (a hop is neither paced nor checked against robots.txt); a request set aside is handed back after 30 s at most, and set
 * aside again if its turn is still far (Crawlee's request lock lasts at least 60 s); the crawler's own
 * `respectRobotsTxtFile` is not needed (the limiter fetches robots.txt itself, paced). The queue should be
 * Crawlee's default `RequestQueue` (what `crawler.run(urls)` and `addRequests` use) or a `RequestList`.
 *
 * Uses Crawlee's `preNavigationHooks`/`postNavigationHooks` (and got's `beforeRequest` hooks through them),
 * `delayRequest` (Crawlee 3.5 and later), `_cleanupContext`, `_handleNavigation` and `autoscaledPool` (tested
 * with 3.18.1); throws a TypeError for anything else, and an Error
 * when the crawler is paced already.
 *
 * @example
 * const limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1 });
 * const crawler = withHostpace(new HttpCrawler({ minConcurrency: 8, maxConcurrency: 8, requestHandler }), limiter);
 * await crawler.run(['https://example.com/', 'https://example.org/']);
 */
export function withHostpace<C extends object>(
  crawler: C,
  limiter: Limiter | SharedLimiter,
  options?: HostpaceCrawleeOptions,
): C;

/**
 * For the `requestHandler` of a `BasicCrawler` paced by `withHostpace`: run `task` (the send: `fetch`,
 * `context.sendRequest`, …) at the turn of `url` (default: the context's request URL) — robots.txt, the host's
 * turn, confirmed right before `task` runs — and report what it returns when that is a response (a fetch
 * `Response` or a got response: `status` or `statusCode`, and `headers`). Resolves to what `task` returned; rejects
 * as the hooks of `withHostpace` fail an attempt (`RobotsDisallowed`/`RobotsUnavailable` with `request.noRetry`,
 * `HostThrottled` on 429/503), or with `task`'s own error (reported to the limiter as a failure).
 *
 * @example
 * const crawler = withHostpace(new BasicCrawler({
 *   requestHandler: async (context) => {
 *     const response = await sendPaced(context, () => fetch(context.request.url));
 *     await context.pushData({ url: context.request.url, html: await response.text() });
 *   },
 * }), limiter);
 */
export function sendPaced<T>(context: PacedContext, task: () => T | PromiseLike<T>, url?: string): Promise<T>;
