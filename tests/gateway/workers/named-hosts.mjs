// The gateway's Worker build, where every name under `hostpace.test` or `elsewhere.test` is this machine: a request
// the gateway sends to `http://www.shop.hostpace.test:PORT/…` goes to `http://127.0.0.1:PORT/…` (no resolver here
// knows those names, and workerd resolves `*.localhost` to nothing). Everything the gateway decides sees the names:
// the host keys, the objects, the operators' rules that name a site (`*.shop.hostpace.test`), the sites hosts are
// grouped in (by the Public Suffix List's default rule, `hostpace.test` and `elsewhere.test` are two sites); only
// the connection is rerouted, at the platform's `fetch`, which the host objects send with.
import Gateway, { HostObject, RulesObject, TokenLedger } from '../../../worker/build/index.js';

export { HostObject, RulesObject, TokenLedger };

const platformFetch = globalThis.fetch;

/** The domains whose names reach 127.0.0.1. */
const DOMAINS = ['hostpace.test', 'elsewhere.test'];

globalThis.fetch = function fetch(input, init) {
  if (typeof input === 'string') {
    const url = new URL(input);
    if (DOMAINS.some((d) => url.hostname === d || url.hostname.endsWith(`.${d}`))) {
      url.hostname = '127.0.0.1';
      return platformFetch(url.href, init);
    }
  }
  return platformFetch(input, init);
};

export default Gateway;
