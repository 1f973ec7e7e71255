// Every client hostpace/redis is tested with, typed as its own package declares it, is a client `redisStore`
// accepts: no cast, no wrapper.
import { Cluster as Ioredis5Cluster, Redis as Ioredis5 } from 'ioredis5';
import { Cluster as Ioredis6Cluster, Redis as Ioredis6 } from 'ioredis6';
import { Cluster as IovalkeyCluster, Redis as Iovalkey } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { redisStore, type SharedStore } from 'hostpace/redis';

const stores: SharedStore[] = [
  redisStore(new Ioredis5({ lazyConnect: true, enableOfflineQueue: false })),
  redisStore(new Ioredis6({ lazyConnect: true, enableOfflineQueue: false })),
  redisStore(new Iovalkey({ lazyConnect: true, enableOfflineQueue: false })),
  redisStore(new Ioredis5Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true })),
  redisStore(new Ioredis6Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true })),
  redisStore(new IovalkeyCluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true })),
  redisStore(createClient4({ disableOfflineQueue: true })),
  redisStore(createClient5({ disableOfflineQueue: true })),
  redisStore(createClient5({ disableOfflineQueue: true, RESP: 3 })),
  redisStore(createClient6({ disableOfflineQueue: true })),
  redisStore(createCluster4({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] })),
  redisStore(createCluster5({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] })),
  redisStore(createCluster6({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] })),
];
export { stores };
