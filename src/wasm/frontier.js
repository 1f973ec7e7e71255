// `Frontier`: the JS class around the wasm core's frontier (`Frontier` of src/wasm/limiter.rs, held as `#raw`), a
// host-aware ready queue over a `Limiter`'s pacing. It checks the types of the per-call methods' arguments (the
// core takes them as a string and numbers, straight from JS) and throws the errors the core answers as values
// (answer.js).
import { Frontier as RawFrontier } from './hostpace.js';
import { DISPOSE, thrown } from './answer.js';
import { numberArg, urlArg } from './lifecycle.js';
import { rawLimiter } from './limiter.js';

export class Frontier {
  #raw;

  /** A frontier paced by `limiter` (optionally bounded to `maxQueued` URLs). */
  constructor(limiter, maxQueued) {
    this.#raw = new RawFrontier(rawLimiter(limiter), maxQueued);
  }

  /** Free the core's memory now (a frontier not freed is freed when it is collected). */
  free() {
    this.#raw.free();
  }

  [DISPOSE]() {
    this.free();
  }

  get refused() {
    return this.#raw.refused;
  }

  get size() {
    return this.#raw.size;
  }

  get takenPermitId() {
    return this.#raw.takenPermitId;
  }

  push(url, priority) {
    return thrown(this.#raw.push(urlArg(url), numberArg(priority, 'priority', true)));
  }

  pop(nowMs) {
    return thrown(this.#raw.pop(numberArg(nowMs, 'nowMs', true)));
  }

  take(nowMs) {
    return thrown(this.#raw.take(numberArg(nowMs, 'nowMs', true)));
  }

  waitMs(nowMs) {
    return thrown(this.#raw.waitMs(numberArg(nowMs, 'nowMs', true)));
  }
}
