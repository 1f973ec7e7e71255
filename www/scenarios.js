// The scenarios: the settings each starts from, the hosts it crawls (links queued at t=0, Infinity = always more),
// what each host's server answers, and what happens before the first request. The servers' scripts are the
// targets' behaviour, not a limiter: every wait is still the module's.
//
// `note(settings, module)` says what the scenario shows; `module` carries what the module answered about these
// settings (`newHostRatePerSec`: the rate a host starts at).

export const ok = () => ({ status: 200, headers: {} });
export const SCENARIOS = {
  discover: {
    title: 'Discover 40 links',
    knob: null, // N plays no part
    note: (s) => `A page links to 40 URLs on one host, all discovered at t=0. The token bucket (capacity ${s.burstCapacity}) ` +
      `sends them together; the leaky bucket sends one per interval; hostpace's layered limiter keeps the interval floor ` +
      `(${s.minIntervalSec} s) whatever the burst capacity. Same average rate, very different access log.`,
    settings: { ratePerSec: 2, burstCapacity: 40, minIntervalSec: 0.5, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 1, n: 0, latencyMs: 200, compare: true, groupBy: 'host' },
    hosts: () => [{ host: 'shop.example', links: 40 }],
    fill: { links: 40 },
  },
  retry429: {
    title: 'Server answers 429 with Retry-After N',
    knob: 'Retry-After N (s)',
    note: (s) => `busy.example answers its first request after t=3 s with 429 and Retry-After: ${s.n}. Nothing departs to it until ` +
      `the cooldown (capped by max backoff, ${s.maxBackoffSec} s) ends; the other hosts keep going.`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 3, n: 10, latencyMs: 200, compare: false, groupBy: 'host' },
    hosts: (s) => [{
      host: 'busy.example',
      links: Infinity,
      respond: (req, state) => {
        if (!state.sent429 && req.departMs >= 3000) {
          state.sent429 = true;
          return { status: 429, headers: { 'retry-after': String(s.n) }, retryAfterMs: s.n * 1000 };
        }
        return ok();
      },
    }],
    fill: { links: Infinity },
  },
  crawlDelay: {
    title: 'robots.txt says Crawl-delay N',
    knob: 'Crawl-delay N (s)',
    note: (s) => `slowpoke.example's robots.txt says Crawl-delay: ${s.n}. It raises that host's interval floor (never lowers ` +
      `it; capped by the module); the other hosts keep the configured pace. It also says Disallow: /private/, and every ` +
      `fourth link there points into it: the module refuses it (✕ on the lane) and it never departs.`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 2, n: 3, latencyMs: 200, compare: false, groupBy: 'host' },
    hosts: (s) => [{
      host: 'slowpoke.example',
      links: Infinity,
      robots: `User-agent: *\nCrawl-delay: ${s.n}\nDisallow: /private/\n`,
      // the crawler's k-th link there (from 1): every fourth one is under /private/
      link: (k) => (k % 4 === 0 ? `/private/${k}` : `/page/${k}`),
    }],
    fill: { links: Infinity },
  },
  rateLimit0: {
    title: 'RateLimit remaining 0',
    knob: 'Server window N (s)',
    note: (s) => `api.example allows 6 requests per ${s.n} s window and says so in a RateLimit header on every answer ` +
      `(remaining, reset). When remaining reaches 0 the host waits for the reset (layer "server quota").`,
    settings: { ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 2, n: 10, latencyMs: 200, compare: false, groupBy: 'host' },
    hosts: (s) => [{
      host: 'api.example',
      links: Infinity,
      respond: (req, state) => {
        // the server's own fixed window (this is the target's behaviour, not a limiter)
        const windowMs = Math.max(1, s.n) * 1000;
        const w = Math.floor(req.arriveMs / windowMs);
        if (state.window !== w) { state.window = w; state.count = 0; }
        state.count += 1;
        const reset = Math.max(1, Math.ceil(((w + 1) * windowMs - req.doneMs) / 1000));
        if (state.count > 6) return { status: 429, headers: { 'retry-after': String(reset) }, retryAfterMs: reset * 1000 };
        return { status: 200, headers: { ratelimit: `limit=6, remaining=${6 - state.count}, reset=${reset}` } };
      },
    }],
    fill: { links: Infinity },
  },
  warmup: {
    title: 'New host warms up',
    knob: null,
    note: (s, module) => `Adaptive pacing: every host starts at ${module.newHostRatePerSec}/s and widens toward ` +
      `${s.ratePerSec}/s after each success faster than ${s.targetLatencyMs} ms. fast.example answers in ${s.latencyMs} ms ` +
      `and widens; slow.example answers in ${2 * s.targetLatencyMs} ms and stays narrow.`,
    settings: { ratePerSec: 4, burstCapacity: 4, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: true, minRatePerSec: 0.5, targetLatencyMs: 300, steps: 10, hosts: 2, n: 0, latencyMs: 100, compare: false, groupBy: 'host' },
    hosts: (s) => [
      { host: 'fast.example', links: Infinity },
      { host: 'slow.example', links: Infinity, latencyMs: 2 * s.targetLatencyMs },
    ],
    fill: { links: Infinity },
  },
  sites: {
    title: 'Hosts of one site',
    knob: null,
    note: (s) => `www.example.com, img.example.com and example.com are one site (*.example.com, by the Public Suffix ` +
      `List); other.example.org is a site of its own, and 192.0.2.7, an IP address, has none. ` +
      (s.groupBy === 'site'
        ? `Grouped by site, each host keeps its own limits (${s.ratePerSec}/s) and each site is paced as one beside ` +
          `them (${s.siteRatePerSec ?? s.ratePerSec}/s${s.siteMinIntervalSec ? `, floor ${s.siteMinIntervalSec} s` : ''}): ` +
          `the three hosts of *.example.com share its pace (layer "site"), the other hosts are not slowed by them.`
        : `Grouped by host, each of the five goes at its own pace: *.example.com gets three times what one host gets.`),
    settings: { ratePerSec: 1, burstCapacity: 1, minIntervalSec: 0, quotaLimit: 0, maxConcurrency: 0, adaptive: false, hosts: 5, n: 0, latencyMs: 200, compare: false,
      groupBy: 'site', siteRatePerSec: 2, siteBurstCapacity: 1, siteMinIntervalSec: null, siteQuotaLimit: null, siteQuotaWindowSec: null },
    hosts: () => ['www.example.com', 'img.example.com', 'example.com', 'other.example.org', '192.0.2.7']
      .map((host) => ({ host, links: Infinity })),
    fill: { links: Infinity },
  },
};
