import { SharedLimiter } from '../pkg/node.js';
import { redisStore } from '../pkg/redis.js';
import { startRedis } from './support/redis.mjs';
import { Redis } from 'ioredis5';
const redis = await startRedis();
const client = new Redis({ port: redis.port, host: '127.0.0.1', enableOfflineQueue: false, lazyConnect: true });
await client.connect();
const warnings = [];
const l = new SharedLimiter({ ratePerSec: 2, burstCapacity: 2, robots: 'ignore', store: redisStore(client, { prefix: 'hp:' }), fleetSize: 1, onStoreWarning: (e) => warnings.push(e.message) });
let k = 0;
process.on("beforeExit", () => console.log("BEFORE EXIT at", k, warnings.slice(-3)));
for (; k < 24000; k++) {
  const h = Math.floor(Math.random() * 10000);
  await l.acquire(`https://host${h}.example/page/${k & 7}`);
}

console.log('done', k, warnings.length, warnings.slice(0, 3));
client.disconnect(); await redis.stop();
