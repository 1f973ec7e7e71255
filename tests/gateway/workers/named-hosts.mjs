// The gateway's Worker build, where every name under `hostpace.test` is this machine: a request the gateway sends
// to `http://www.shop.hostpace.test:PORT/…` goes to `http://127.0.0.1:PORT/…` (no resolver here knows those names,
// and workerd resolves `*.localhost` to nothing). Everything the gateway decides sees the names: the host keys,
// the objects, the operators' rules that name a site (`*.shop.hostpace.test`); only the connection is rerouted, at
// the platform's `fetch`, which the host objects send with.
import Gateway, { HostObject, RulesObject, TokenLedger } from '../../../worker/build/index.js';

export { HostObject, RulesObject, TokenLedger };

const platformFetch = globalThis.fetch;

globalThis.fetch = function fetch(input, init) {
  if (typeof input === 'string') {
    const url = new URL(input);
    if (url.hostname === 'hostpace.test' || url.hostname.endsWith('.hostpace.test')) {
      url.hostname = '127.0.0.1';
      return platformFetch(url.href, init);
    }
  }
  return platformFetch(input, init);
};

export default Gateway;
