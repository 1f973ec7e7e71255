// The README's crawler: a host-aware frontier feeding polite fetches. Hosts are crawled concurrently, each paced by
// the limiter; limiter.fetch honours 429/503 + Retry-After. The block between the markers is shown verbatim in the
// README (there the import reads `from 'hostpace'`); tests/js/crawler.test.mjs runs it against a local origin.
// As a script: node tests/js/crawler.mjs URL...   (prints each page's status)
import { pathToFileURL } from 'node:url';
import { Frontier, Limiter } from '../../pkg/node.js';

// --- README snippet ---
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const linksIn = (html, base) =>
  [...html.matchAll(/href="([^"#]+)"/g)].map((m) => new URL(m[1], base).href).filter((u) => /^https?:/.test(u));

export async function crawl(seeds, limiter = new Limiter({ ratePerSec: 1, burstCapacity: 1 })) {
  const frontier = new Frontier(limiter), seen = new Set(), pages = new Map(), running = new Set();
  const add = (url) => { // a URL robots.txt is known to disallow is refused here, never queued
    if (!seen.has(url)) { seen.add(url); if (!frontier.push(url)) pages.set(url, 'disallowed by robots.txt'); }
  };
  seeds.forEach((url) => add(new URL(url).href));
  while (frontier.size > 0 || running.size > 0) {
    const url = frontier.pop(); // a URL whose host may go now (nothing is reserved until the fetch)
    if (url === undefined) { // every host must wait: sleep until one may go, or until a page lands
      await Promise.race([...running, ...(frontier.size > 0 ? [sleep(frontier.waitMs())] : [])]);
      continue;
    }
    const page = limiter.fetch(url) // reserves the departure now; waits out 429/503 Retry-After, bounded
      .then(async (res) => { pages.set(url, res.status); linksIn(await res.text(), url).forEach(add); })
      .catch((error) => pages.set(url, error))
      .finally(() => running.delete(page));
    running.add(page);
  }
  return pages; // url → status (or the error)
}
// --- end of README snippet ---

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seeds = process.argv.slice(2);
  if (seeds.length === 0) {
    console.error('usage: node tests/js/crawler.mjs URL...');
    process.exit(2);
  }
  for (const [url, status] of await crawl(seeds)) console.log(status instanceof Error ? status.message : status, url);
}
