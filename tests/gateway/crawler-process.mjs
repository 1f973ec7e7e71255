// One crawler process for the gateway tests: fetches the given URLs (3 at a time) through the gateway and prints
// one JSON line of statuses. `route`: `permission` (default) sends through a GatewayLimiter (acquire, depart, its
// own fetch, observe); `fetch` asks the gateway to fetch (`GET /v1/fetch`).
// Usage: node crawler-process.mjs <gateway> <token> <urls.json> [permission|fetch]
import { GatewayLimiter } from '../../pkg/node.js';

const [gateway, token, urlsJson, route = 'permission'] = process.argv.slice(2);
const limiter = new GatewayLimiter(gateway, token);
const viaGateway = (url) =>
  fetch(`${gateway}/v1/fetch?url=${encodeURIComponent(url)}`, { headers: { authorization: `Bearer ${token}` } });
const get = route === 'fetch' ? viaGateway : (url) => limiter.fetch(url);
const urls = JSON.parse(urlsJson);
const statuses = [];
// warm this process's fetch (undici's first use stalls for tens of milliseconds) so the crawl measures pacing,
// not a cold start; the origin's log drops /__warm
await Promise.all(Array.from({ length: 3 }, () => fetch(new URL('/__warm', urls[0])).then((r) => r.arrayBuffer())));
const lanes = Array.from({ length: 3 }, async (_, lane) => {
  for (let i = lane; i < urls.length; i += 3) {
    const res = await get(urls[i]);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
});
await Promise.all(lanes);
process.stdout.write(`${JSON.stringify({ statuses })}\n`);
