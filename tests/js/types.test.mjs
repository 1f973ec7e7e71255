// The TypeScript checks under `node --test`: the typed usage example compiles against the generated declarations,
// the shapes the module reads from JS objects declare exactly the properties it reads, and the package's JS classes
// have exactly the members their declarations name.

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

// hostpace/redis takes the clients as their own packages type them (ioredis 5 and 6, iovalkey, node-redis 4, 5, 6,
// cluster clients included), with no cast.
test('tests/js/types/redis/clients.ts: every tested Redis client, as its package types it, is a client of redisStore', () => {
  const run = check('tests/js/types/redis');
  assert.equal(run.status, 0, `tsc -p tests/js/types/redis failed:\n${run.stdout}${run.stderr}`);
});

// Were declaration bugs (fixed): tests/js/types/expected/expected.ts lists what the .d.ts should allow or refuse and
// does not yet (optional Limiter config, HostLimiter's `any` config, HostLimiter.layer(): string, and
// [Symbol.dispose] needing lib esnext.disposable). Expected to fail until the declarations are fixed.
test('regression: tests/js/types/expected/expected.ts type-checks (declaration bugs)', () => {
  const run = check('tests/js/types/expected');
  assert.equal(run.status, 0, `declaration bugs (tsc -p tests/js/types/expected):\n${run.stdout}${run.stderr}`);
});

// The shapes the module reads from JS objects, by name: the fields their declarations name must be the properties
// the module reads, no more and no fewer, and a field the declaration requires must be one the module refuses to
// go without (an optional one, one it does without).

/** `[name, optional]` of each field in the text of a declared object type (`a: number; b?: string`). */
function declaredFields(body) {
  return [...body.matchAll(/(?:^|[;{\n])\s*(\w+)(\??):/g)].map((m) => [m[1], m[2] === '?']).sort();
}

/**
 * Check a shape's declared fields against `read(value)`, which passes `value` to the module: the properties read of
 * a full `sample` (through a recording Proxy), and which fields can be left out.
 */
function checkShape(fields, sample, read) {
  const seen = new Set();
  const proxy = new Proxy(sample, { get: (t, key, r) => (seen.add(key), Reflect.get(t, key, r)) });
  read(proxy);
  const names = fields.map(([name]) => name);
  assert.deepEqual([...seen].map(String).sort(), names, 'the properties read are the declared fields');
  for (const [name, optional] of fields) {
    const without = { ...sample };
    delete without[name];
    if (optional) read(without);
    else assert.throws(() => read(without), TypeError, `${name} is required, as declared`);
  }
}

// `ResponseLike` is declared by hand beside the Rust code that reads it (`ResponseParts::read`).
test("ResponseLike's object form declares exactly the properties observe reads", async () => {
  const dts = readFileSync(`${root}pkg/hostpace.d.ts`, 'utf8');
  const declared = /export type ResponseLike =\s*\|\s*Response\s*\|\s*\{([^}]*)\};/.exec(dts);
  assert.ok(declared, 'pkg/hostpace.d.ts declares ResponseLike as Response | { … }');
  const fields = declaredFields(declared[1]);
  assert.ok(fields.length > 0, 'fields read from the declaration');

  const { Limiter } = await import('../../pkg/node.js');
  checkShape(fields, { status: 503, headers: { 'retry-after': '7' }, latencyMs: 80 }, (response) => {
    const limiter = new Limiter();
    try {
      const observed = limiter.observe('https://a.example/', response, undefined, 1_000_000);
      if (response.headers) assert.equal(observed.cooldownUntilMs, 1_007_000, 'its Retry-After set the cooldown');
    } finally {
      limiter.free();
    }
  });
});

// `Cooldown` is generated from `shapes::Cooldown`; the glue reads its fields by name (`glue::spans`).
test('Cooldown declares exactly the properties audit reads of each cooldown', async () => {
  const dts = readFileSync(`${root}pkg/hostpace.d.ts`, 'utf8');
  const declared = /export interface Cooldown \{([^}]*)\}/.exec(dts);
  assert.ok(declared, 'pkg/hostpace.d.ts declares the interface Cooldown');
  const fields = declaredFields(declared[1]);
  assert.ok(fields.length > 0, 'fields read from the declaration');

  const { audit } = await import('../../pkg/node.js');
  checkShape(fields, { startMs: 100, endMs: 300 }, (cooldown) => {
    const found = audit({ ratePerSec: 100, burstCapacity: 100 }, [0, 200], [cooldown]);
    assert.deepEqual(found, [{ kind: 'cooldown', atMs: 200, untilMs: 300 }], 'the cooldown was read');
  });
});

// The classes are JS classes holding the wasm objects (src/wasm/limiter.js, frontier.js, ...), declared by the
// `.d.ts` wasm-bindgen writes of the Rust classes (and, for Limiter, the interface beside them that declares what
// its JS class adds): each class must have exactly the members its declaration names, and the entry point must
// export exactly the values the declarations export.
test('every class the package exports has exactly the members hostpace.d.ts declares', async () => {
  const dts = readFileSync(`${root}pkg/hostpace.d.ts`, 'utf8');
  const hostpace = await import('../../pkg/node.js');
  const classes = [...dts.matchAll(/^export class (\w+) \{\n([\s\S]*?)\n\}/gm)];
  assert.ok(classes.length >= 6, 'classes read from the declaration');
  for (const [, name, body] of classes) {
    const declared = new Set([...body.matchAll(/^ {4}(?:readonly |static )?(\w+)[?(:<]/gm)].map((m) => m[1]));
    const added = new RegExp(`^export interface ${name} \\{\\n([\\s\\S]*?)\\n\\}`, 'm').exec(dts);
    for (const m of added?.[1].matchAll(/^ {2,4}(\w+)[?(:<]/gm) ?? []) declared.add(m[1]);
    const value = hostpace[name];
    assert.equal(typeof value, 'function', `${name} is exported`);
    const statics = Object.getOwnPropertyNames(value).filter((k) => !['length', 'name', 'prototype'].includes(k));
    const members = new Set([...Object.getOwnPropertyNames(value.prototype), ...statics]);
    assert.deepEqual([...members].sort(), [...declared].sort(), `${name}'s members are the declared ones`);
  }
  const exported = [...dts.matchAll(/^export (?:class|function) (\w+)/gm)].map((m) => m[1]);
  const gateway = readFileSync(`${root}pkg/gateway.d.ts`, 'utf8');
  exported.push(...[...gateway.matchAll(/^export (?:declare )?(?:class|function) (\w+)/gm)].map((m) => m[1]));
  const shared = readFileSync(`${root}pkg/shared-limiter.d.ts`, 'utf8');
  exported.push(...[...shared.matchAll(/^export (?:declare )?(?:class|function) (\w+)/gm)].map((m) => m[1]));
  assert.deepEqual(Object.keys(hostpace).sort(), [...new Set(exported)].sort(), 'the values exported');
});
