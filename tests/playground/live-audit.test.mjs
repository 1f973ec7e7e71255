// The live view's audit (www/live.js `auditLiveLane`) through the package's real `audit`: a departure inside a
// cooldown the page saw is a violation, and the call's shape is one the module accepts (a refused call would only
// show as the lane's auditError).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit } from '../../pkg/node.js';
import { auditLiveLane, liveLane, TOLERANCE_MS } from '../../www/live.js';

test('auditLiveLane judges a live lane with its cooldowns through the module', () => {
  const lane = liveLane('a.example');
  lane.report = { policy: { ratePerSec: 1, burstCapacity: 1 }, stats: {} };
  lane.times = [0, 1000, 2000, 5000];
  lane.cooldowns = [[2500, 4000], [4500, 6000]];
  auditLiveLane(lane, audit);
  assert.equal(lane.auditError, '', 'the module accepted the call');
  assert.deepEqual(lane.violations, [{ kind: 'cooldown', atMs: 5000, untilMs: 6000 }]);

  lane.times = [0, 1000, 2000, 4000 + TOLERANCE_MS];
  auditLiveLane(lane, audit);
  assert.deepEqual([lane.auditError, lane.violations], ['', []], 'a departure just after a cooldown is polite');
});
