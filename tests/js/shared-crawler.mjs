// One process of a crawler fleet for tests/js/shared-fleet.test.mjs: a SharedLimiter on a real redis-server
// (ioredis, through hostpace/redis), fetching its URLs a few at a time. argv[2] is JSON:
//   { redisPort, prefix, config, urls, workers?, skewMs?, hangPath?, plain? }
// `plain` crawls with a `Limiter` of its own instead (no store, `fleetSize` left out): one process, the yardstick.
// `skewMs` runs this process's clock that far off (performance.now and Date.now, read by the package), as on a
// machine whose clock is wrong. A URL whose path is `hangPath` is fetched with a task that never ends (the
// process is killed while holding its permit). It reports over IPC: { ready }, then { done, failures, longestMs }.
const options = JSON.parse(process.argv[2]);
if (options.skewMs) {
  const now = performance.now.bind(performance);
  performance.now = () => now() + options.skewMs;
  const dateNow = Date.now;
  Date.now = () => dateNow() + options.skewMs;
}
const { Limiter, SharedLimiter } = await import('../../pkg/node.js');
const { redisStore } = await import('../../pkg/redis.js');
const { Redis } = await import('ioredis5');

const client = new Redis({
  host: '127.0.0.1',
  port: options.redisPort,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => 100,
  lazyConnect: true,
});
client.on('error', () => {}); // a store out of reach is the limiter's to ride out
await client.connect();
const { fleetSize, ...own } = options.config;
const limiter = options.plain
  ? new Limiter(own)
  : new SharedLimiter({
      ...options.config,
      store: redisStore(client, { prefix: options.prefix, timeoutMs: 500 }),
      storeTimeoutMs: 500,
    });
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve)); // go

const queue = [...options.urls];
const failures = [];
let longestMs = 0;
async function worker() {
  for (let url; (url = queue.shift()) !== undefined; ) {
    const started = performance.now();
    try {
      if (options.hangPath && new URL(url).pathname === options.hangPath) {
        await limiter.schedule(url, async () => {
          await fetch(url);
          process.send({ holding: true });
          await new Promise(() => {}); // holds its permit until the process is killed
        });
      }
      const response = await limiter.fetch(url, { timeoutMs: 60_000 });
      await response.arrayBuffer();
    } catch (error) {
      failures.push(`${url}: ${error.name}: ${error.message}`);
    }
    longestMs = Math.max(longestMs, performance.now() - started);
  }
}
await Promise.all(Array.from({ length: options.workers ?? 3 }, worker));
process.send({ done: true, failures, longestMs });
client.disconnect();
process.disconnect();
