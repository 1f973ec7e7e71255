// The settings exported: the JavaScript that builds the same limiter (with the module's warnings about it), and
// the gateway's [vars] for wrangler.toml.

import { limiterConfig } from './settings.js';

/** `new Limiter({...})` with the settings' config, its `warnings` (the module's) as comments. */
export function snippet(settings, warnings = []) {
  const c = limiterConfig(settings);
  const lines = Object.entries(c).map(([k, v]) => `  ${k}: ${typeof v === 'object' ? JSON.stringify(v).replace(/"(\w+)":/g, '$1: ').replace(/,/g, ', ') : v},`);
  const warn = warnings.map((w) => `// warning: ${w}\n`).join('');
  return `import { Limiter } from 'hostpace';\n${warn}const limiter = new Limiter({\n${lines.join('\n')}\n});\n`;
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
  if (s.adaptive) lines.push('# adaptive pacing has no gateway variable: every host runs at the configured rate');
  return `${lines.join('\n')}\n`;
}
