// The gateway's Worker build, with every answer of a host's object reaching the Worker 0–300 ms after the object
// gave it: what a busy Worker isolate does to that hop. The objects themselves are the build's, unchanged.
import Gateway, { HostObject, RulesObject, TokenLedger } from '../../../worker/build/index.js';

export { HostObject, RulesObject, TokenLedger };

const late = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 300));

/** `target` behind a proxy whose methods run on `target` itself (the runtime's objects refuse a proxy as `this`). */
function wrap(target, overrides) {
  return new Proxy(target, {
    get(t, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key];
      const value = Reflect.get(t, key);
      return typeof value === 'function' && key !== 'constructor' ? value.bind(t) : value;
    },
  });
}

const stub = (s) => wrap(s, { fetch: async (...args) => s.fetch(...args).then(async (res) => (await late(), res)) });

export default class extends Gateway {
  constructor(ctx, env) {
    super(ctx, { ...env, HOSTS: wrap(env.HOSTS, { get: (id) => stub(env.HOSTS.get(id)) }) });
  }
}
