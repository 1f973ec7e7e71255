// The TypeScript checks under `node --test`: the typed usage example compiles against the generated declarations,
// and the one declaration written by hand for a shape Rust reads (`ResponseLike`) matches what it reads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = `${root}node_modules/.bin/tsc`;

function check(project) {
  assert.ok(existsSync(tsc), 'node_modules/.bin/tsc is missing: run `npm install`');
  assert.ok(existsSync(`${root}pkg/index.d.ts`), 'pkg/ is missing: run `npm run build:pkg`');
  const run = spawnSync(tsc, ['-p', project, '--pretty', 'false'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.error, undefined, String(run.error));
  return run;
}

test('tests/js/types/usage.ts type-checks (strict) against pkg/*.d.ts', () => {
  const run = check('tests/js/types');
  assert.equal(run.status, 0, `tsc -p tests/js/types failed:\n${run.stdout}${run.stderr}`);
});

// Were declaration bugs (fixed): tests/js/types/expected/expected.ts lists what the .d.ts should allow or refuse and
// does not yet (optional Limiter config, HostLimiter's `any` config, HostLimiter.layer(): string, and
// [Symbol.dispose] needing lib esnext.disposable). Expected to fail until the declarations are fixed.
test('regression: tests/js/types/expected/expected.ts type-checks (declaration bugs)', () => {
  const run = check('tests/js/types/expected');
  assert.equal(run.status, 0, `declaration bugs (tsc -p tests/js/types/expected):\n${run.stdout}${run.stderr}`);
});

// `ResponseLike` is declared by hand beside the Rust code that reads it (`ResponseParts::read`, by name): the fields
// the object form declares must be the properties `observe` reads, no more and no fewer.
test("ResponseLike's object form declares exactly the properties observe reads", async () => {
  const dts = readFileSync(`${root}pkg/hostpace.d.ts`, 'utf8');
  const declared = /export type ResponseLike =\s*\|\s*Response\s*\|\s*\{([^}]*)\};/.exec(dts);
  assert.ok(declared, 'pkg/hostpace.d.ts declares ResponseLike as Response | { … }');
  const fields = [...declared[1].matchAll(/(?:^|;)\s*(\w+)\??:/g)].map((m) => m[1]).sort();
  assert.deepEqual(fields, ['headers', 'latencyMs', 'status'], 'the fields read from the declaration');

  const { Limiter } = await import('../../pkg/node.js');
  const limiter = new Limiter();
  const read = new Set();
  const response = new Proxy(
    { status: 503, headers: { 'retry-after': '7' }, latencyMs: 80 },
    { get: (target, key, receiver) => (read.add(key), Reflect.get(target, key, receiver)) },
  );
  const observed = limiter.observe('https://a.example/', response, undefined, 1_000_000);
  assert.equal(observed.cooldownUntilMs, 1_007_000, 'the response was read: its Retry-After set the cooldown');
  assert.deepEqual([...read].map(String).sort(), fields, 'the properties observe read');
  limiter.free();
});
