// What the benchmarks share: what they record about the run (the machine, Node, and which package build was
// measured), and the fixed pseudo-random sequence of their workloads.
import os from 'node:os';
import { readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';

export function environment(benchmark, quick) {
  const wasmPath = new URL('../pkg/hostpace_bg.wasm', import.meta.url);
  return {
    benchmark,
    date: new Date().toISOString(),
    quick,
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadavgAtEnd: os.loadavg(),
    pkg: {
      version: JSON.parse(readFileSync(new URL('../pkg/package.json', import.meta.url), 'utf8')).version,
      wasmBytes: statSync(wasmPath).size,
      wasmSha256: createHash('sha256').update(readFileSync(wasmPath)).digest('hex'),
    },
  };
}

/** A fixed pseudo-random sequence (mulberry32) from `seed`: numbers in [0, 1), the same on every run. */
export function mulberry32(seed) {
  let a = seed;
  return function () {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
