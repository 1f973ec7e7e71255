// What both benchmarks record about the run: the machine, Node, and which package build was measured.
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
