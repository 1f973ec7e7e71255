// `SlidingWindow`: the JS class around the wasm core's `SlidingWindow` (src/wasm/primitives.rs, held as `#raw`), a
// sliding-window quota with an explicit clock. The core reads and checks every argument itself; this throws the
// errors it answers as values (answer.js).
import { SlidingWindow as RawSlidingWindow } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';

export class SlidingWindow {
  #raw;

  constructor(limit, windowMs) {
    this.#raw = new RawSlidingWindow(limit, windowMs);
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

  used(nowMs) {
    return thrown(this.#raw.used(nowMs));
  }
}
