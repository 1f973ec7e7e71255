// The animation loop: each frame the virtual clock advances (in live mode the present moves with the gateway's
// clock), a few lanes are audited again, and what changed is drawn. It also keeps the frame times.

import { render } from './board.js';
import { auditLane } from './lanes.js';
import { advanceTo } from './simulation.js';
import { drawnLanes, state } from './state.js';

const MAX_FRAME_MS = 100; // a late frame (background tab) advances at most this much real time
const AUDITS_PER_FRAME = 2; // lanes re-audited per frame (round robin); state reads audit everything first
const FRAME_SAMPLES = 600; // frame-time ring buffer
const frames = { work: new Float64Array(FRAME_SAMPLES), gap: new Float64Array(FRAME_SAMPLES), count: 0, audited: 0 };

/** Starts the loop. */
export function startLoop() {
  requestAnimationFrame(frame);
}

function frame(ts) {
  const t0 = performance.now();
  if (state.mode === 'live') {
    if (state.view.endMs === null) state.drawDirty = true; // following the present: the timelines scroll with it
  } else if (state.speed > 0 && state.frameTs !== null) {
    advanceTo(state.clockMs + Math.min(ts - state.frameTs, MAX_FRAME_MS) * state.speed);
  }
  const shown = drawnLanes();
  for (let k = 0; k < AUDITS_PER_FRAME && shown.length; k++) {
    const lane = shown[frames.audited++ % shown.length];
    if (lane.auditDirty) auditLane(lane);
  }
  render();
  const i = frames.count++ % FRAME_SAMPLES;
  frames.work[i] = performance.now() - t0;
  frames.gap[i] = state.frameTs === null ? NaN : ts - state.frameTs;
  state.frameTs = ts;
  requestAnimationFrame(frame);
}

/** `{ frames, workMs, frameIntervalMs }`: page work per frame and frame interval, each `{ samples, median, p95, max }`. */
export function frameStats() {
  return { frames: Math.min(frames.count, FRAME_SAMPLES), workMs: percentiles(frames.work), frameIntervalMs: percentiles(frames.gap) };
}

/** Forgets the frame times so far. */
export function resetFrameStats() {
  frames.count = 0;
  frames.work.fill(0);
  frames.gap.fill(NaN);
}

// Median, p95 and max of the frame samples in `buf`.
function percentiles(buf) {
  const n = Math.min(frames.count, FRAME_SAMPLES);
  const xs = Array.from(buf.subarray(0, n)).filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] : NaN);
  return { samples: xs.length, median: at(0.5), p95: at(0.95), max: xs.length ? xs[xs.length - 1] : NaN };
}
