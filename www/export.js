// The settings exported: the JavaScript that builds the same limiter (with the module's warnings about it), and
// the gateway's [vars] for wrangler.toml.

import { limiterConfig } from './settings.js';

/** `new Limiter({...})` with the settings' config, its `warnings` (the module's) as comments. */
export function snippet(settings, warnings = []) {
  const c = limiterConfig(settings);
  const lines = Object.entries(c).map(([k, v]) => `  ${k}: ${literal(v)},`);
  const warn = warnings.map((w) => `// warning: ${w}\n`).join('');
  return `import { Limiter } from 'hostpace';\n${warn}const limiter = new Limiter({\n${lines.join('\n')}\n});\n`;
}

// A config value as JavaScript: a word quoted, an object with its keys bare (`{ limit: 5, windowSec: 10 }`).
function literal(v) {
  if (typeof v === 'string') return `'${v.replace(/[\\']/g, '\\$&')}'`;
  if (typeof v === 'object') {
    const inner = Object.entries(v).map(([k, x]) => `${k}: ${literal(x)}`).join(', ');
    return inner ? `{ ${inner} }` : '{}';
  }
  return String(v);
}

/** The gateway's [vars] (names as worker/src/config.rs reads them; values are strings in wrangler.toml). */
export function wranglerVars(s) {
  const num = (v) => (Number.isInteger(v) ? v.toFixed(1) : String(v));
  const lines = [
    '[vars]',
    `CRAWL_RATE_PER_SEC = "${num(s.ratePerSec)}"`,
    `CRAWL_BURST_CAPACITY = "${num(s.burstCapacity)}"`,
    `CRAWL_MIN_INTERVAL_SEC = "${num(s.minIntervalSec)}"`,
    `CRAWL_JITTER = "${num(s.jitter)}"`,
    `CRAWL_MAX_CONCURRENCY = "${s.maxConcurrency}"`,
    `CRAWL_QUOTA_LIMIT = "${s.quotaLimit}"`,
    `CRAWL_QUOTA_WINDOW_SEC = "${num(s.quotaWindowSec)}"`,
    `CRAWL_MAX_BACKOFF_SEC = "${num(s.maxBackoffSec)}"`,
    `CRAWL_MAX_RETRIES = "${s.maxRetries}"`,
  ];
  if (s.groupBy !== 'host') {
    // a site's knobs: only those set (the gateway takes the config's for the others)
    lines.push(`CRAWL_GROUP_BY = ${JSON.stringify(s.groupBy)}`);
    const site = [
      ['CRAWL_SITE_RATE_PER_SEC', s.siteRatePerSec, num], ['CRAWL_SITE_BURST_CAPACITY', s.siteBurstCapacity, num],
      ['CRAWL_SITE_MIN_INTERVAL_SEC', s.siteMinIntervalSec, num], ['CRAWL_SITE_MAX_CONCURRENCY', s.siteMaxConcurrency, String],
      ['CRAWL_SITE_QUOTA_LIMIT', s.siteQuotaLimit, String],
      ['CRAWL_SITE_QUOTA_WINDOW_SEC', s.siteQuotaWindowSec, num],
    ];
    for (const [name, v, fmt] of site) if (v != null) lines.push(`${name} = "${fmt(v)}"`);
  }
  if (s.adaptive) lines.push('# adaptive pacing has no gateway variable: every host runs at the configured rate');
  return `${lines.join('\n')}\n`;
}
