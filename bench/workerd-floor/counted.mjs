// The gateway's Worker build with its Durable Object calls counted: each object class wrapped in one that counts
// the calls it receives, and the entry point extended with GET /__calls (the counts so far). For run.mjs only.
import gateway, { HostObject as Host, RulesObject as Rules, TokenLedger as Ledger } from '../../worker/build/index.js';

const calls = { host: 0, ledger: 0, rules: 0 };

/** `Inner`, an object class, wrapped in one that counts the calls it receives under `calls[name]`. */
const counting = (Inner, name) =>
  class {
    constructor(ctx, env) {
      this.inner = new Inner(ctx, env);
    }
    fetch(request) {
      calls[name] += 1;
      return this.inner.fetch(request);
    }
  };

export const HostObject = counting(Host, 'host');
export const TokenLedger = counting(Ledger, 'ledger');
export const RulesObject = counting(Rules, 'rules');

export default class extends gateway {
  fetch(request) {
    if (new URL(request.url).pathname === '/__calls') return Response.json(calls);
    return super.fetch(request);
  }
}
