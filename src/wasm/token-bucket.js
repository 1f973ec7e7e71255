// `TokenBucket`: the JS class around the wasm core's `TokenBucket` (src/wasm/primitives.rs, held as `#raw`), a token
// bucket with an explicit clock. The core reads and checks every argument itself; this throws the errors it answers
// as values (answer.js).
import { TokenBucket as RawTokenBucket } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';

export class TokenBucket {
  #raw;

  constructor(ratePerSec, capacity) {
    this.#raw = new RawTokenBucket(ratePerSec, capacity);
  }

  /** Free the core's memory now (one not freed is freed when it is collected). */
  free() {
    this.#raw.free();
  }

  [DISPOSE]() {
    this.free();
  }

  get capacity() {
    return this.#raw.capacity;
  }

  acquire(nowMs) {
    return thrown(this.#raw.acquire(nowMs));
  }

  peek(nowMs) {
    return thrown(this.#raw.peek(nowMs));
  }

  tokens(nowMs) {
    return thrown(this.#raw.tokens(nowMs));
  }
}
