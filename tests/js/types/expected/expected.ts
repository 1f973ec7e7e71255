// Declaration bugs, one per block: each line states what a user can rightly expect of the types.
import { HostLimiter, Limiter, type Layer } from 'hostpace';

// 1. The config is optional at runtime (`new Limiter()` takes the defaults, as LimiterConfig's doc says), but the
//    constructor is declared `(config: LimiterConfig | undefined)`, which TypeScript makes a required argument.
const withDefaults = new Limiter();

// 2. HostLimiter takes "the same config as Limiter", but is declared `(config: any)`: typos and wrong types pass.
// @ts-expect-error an unknown field
new HostLimiter({ ratePerSecond: 2 });
// @ts-expect-error a wrong type
new HostLimiter({ burstCapacity: '10' });

// 3. HostLimiter.layer() returns one of the Layer names, but is declared `string`.
const layer: Layer = new HostLimiter({}).layer(0);

// 4. The declarations use [Symbol.dispose] (wasm-bindgen output), which needs lib "esnext.disposable": with plain
//    ES2022 + DOM and skipLibCheck off, hostpace.d.ts itself fails to compile ("Property 'dispose' does not exist
//    on type 'SymbolConstructor'"). A `/// <reference lib="esnext.disposable" />` in index.d.ts would fix it.

void [withDefaults, layer];
