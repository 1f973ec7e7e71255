// One crawler process for tests/gateway/gateway-limiter.test.mjs: fetches the given URLs through a GatewayLimiter
// (3 at a time) and prints one JSON line of statuses. Usage: node crawler-process.mjs <gateway> <token> <urls.json>
import { GatewayLimiter } from '../../pkg/node.js';

const [gateway, token, urlsJson] = process.argv.slice(2);
const limiter = new GatewayLimiter(gateway, token);
const urls = JSON.parse(urlsJson);
const statuses = [];
// warm this process's fetch (undici's first use stalls for tens of milliseconds) so the crawl measures pacing,
// not a cold start; the origin's log drops /__warm
await Promise.all(Array.from({ length: 3 }, () => fetch(new URL('/__warm', urls[0])).then((r) => r.arrayBuffer())));
const lanes = Array.from({ length: 3 }, async (_, lane) => {
  for (let i = lane; i < urls.length; i += 3) {
    const res = await limiter.fetch(urls[i]);
    await res.arrayBuffer();
    statuses.push(res.status);
  }
});
await Promise.all(lanes);
process.stdout.write(`${JSON.stringify({ statuses })}\n`);
