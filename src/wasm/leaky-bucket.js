// `LeakyBucket`: the JS class around the wasm core's `LeakyBucket` (src/wasm/primitives.rs, held as `#raw`), a leaky
// bucket with slot reservation and an explicit clock. The core reads and checks every argument itself; this throws
// the errors it answers as values (answer.js).
import { LeakyBucket as RawLeakyBucket } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';

export class LeakyBucket {
  #raw;

  constructor(intervalMs) {
    this.#raw = new RawLeakyBucket(intervalMs);
  }

  /** Free the core's memory now (one not freed is freed when it is collected). */
  free() {
    this.#raw.free();
  }

  [DISPOSE]() {
    this.free();
  }

  nextSlotMs() {
    return this.#raw.nextSlotMs();
  }

  acquire(nowMs) {
    return thrown(this.#raw.acquire(nowMs));
  }

  peek(nowMs) {
    return thrown(this.#raw.peek(nowMs));
  }
}
