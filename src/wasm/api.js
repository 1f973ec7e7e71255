// The package's public surface, the same from every entry point (node.js, browser.js, workerd.js each initialise
// the wasm module their way, then export this): a JS class per class of the core (each in its own file, holding
// the wasm object), the functions, and GatewayLimiter. Nothing here runs on import; the wasm glue (hostpace.js)
// is never exported as such, so every call goes through a class that checks its arguments and throws its errors.
import { audit as rawAudit } from './hostpace.js';
import { thrown } from './answer.js';

export { Limiter } from './limiter.js';
export { SharedLimiter } from './shared-limiter.js';
export { Frontier } from './frontier.js';
export { TokenBucket } from './token-bucket.js';
export { LeakyBucket } from './leaky-bucket.js';
export { SlidingWindow } from './sliding-window.js';
export { HostLimiter } from './host-limiter.js';
export { initSync, nowMs, pushesBack } from './hostpace.js';
export * from './gateway.js';

/** Every violation of `config`'s limits in one host's departures (declared in hostpace.d.ts). */
export function audit(config, departuresMs, cooldowns, toleranceMs) {
  return thrown(rawAudit(config, departuresMs, cooldowns, toleranceMs));
}
