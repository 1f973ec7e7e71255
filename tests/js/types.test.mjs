// The TypeScript check under `node --test`: the typed usage example compiles against the generated declarations.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
