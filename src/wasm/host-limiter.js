// `HostLimiter`: the JS class around the wasm core's `HostLimiter` (src/wasm/primitives.rs, held as `#raw`), one
// host's layered limiter with an explicit clock. The core reads and checks every argument itself; this throws the
// errors it answers as values (answer.js).
import { HostLimiter as RawHostLimiter } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';

export class HostLimiter {
  #raw;

  constructor(config) {
    this.#raw = new RawHostLimiter(config);
  }

  /** Free the core's memory now (one not freed is freed when it is collected). */
  free() {
    this.#raw.free();
  }

  [DISPOSE]() {
    this.free();
  }

  acquire(nowMs) {
    return thrown(this.#raw.acquire(nowMs));
  }

  peek(nowMs) {
    return thrown(this.#raw.peek(nowMs));
  }

  layer(nowMs) {
    return thrown(this.#raw.layer(nowMs));
  }

  throttle(retryAfterMs, nowMs) {
    return thrown(this.#raw.throttle(retryAfterMs, nowMs));
  }
}
