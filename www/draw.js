// Drawing on the canvases: each lane's timeline (its access log over the part of the run in view, the spans the
// server imposed, the answers that changed pacing, audit violations), the token chart under it, and the overview
// strip of the whole run. Everything drawn is a lane's record of the module's answers; nothing is computed here.

import { clockTime } from './format.js';
import { lowerBound, upperBound } from './sorted.js';
import { board, drawnLanes, originMs, presentMs, state } from './state.js';
import { PAD_PX, viewWindow } from './timeline.js';

export const TIMELINE_PX = 72; // CSS height of a timeline
export const CHART_PX = 24; // CSS height of the token chart under a timeline
const MARK_PX = 12; // a departure's mark (CSS px); departures in the same pixel column stack up STACK_PX apart
const STACK_PX = 4;
const LAYER_COLORS = {
  none: '#7b8390',
  interval: '#2f6fdb',
  burst: '#e08a00',
  quota: '#8e44ad',
  cooldown: '#d62828',
  concurrency: '#138a72',
  serverQuota: '#8c5a2b',
  site: '#c2185b',
};
const VIOLATION_COLOR = '#b3001b';

/** Draws every lane's timeline and chart (sites' too), and the overview. */
export function drawBoard() {
  for (const lane of drawnLanes()) {
    drawLane(lane);
    if (lane.kind !== 'leaky') drawChart(lane);
  }
  drawOverview();
}

// A label of the timelines' time grid: seconds of the scenario, or the gateway's time of day.
function gridLabel(ms) {
  return state.mode === 'live' ? clockTime(ms) : `${ms / 1000}s`;
}

// The time axis a lane's timeline and chart share: the part of the run in view across canvas `c` (drawn
// `cssHeight` px high), `x(t)` in canvas pixels. `start` and `VIEW` are the view's first instant and its span.
function axis(c, cssHeight) {
  const W = c.width;
  const H = c.height;
  const dpr = H / cssHeight;
  const { startMs: start, spanMs: VIEW } = viewWindow();
  const pad = PAD_PX * dpr;
  const x = (t) => pad + ((t - start) / VIEW) * (W - 2 * pad);
  return { ctx: c.getContext('2d'), W, H, dpr, start, VIEW, pad, x };
}

// One lane's access log over the part of the run in view.
function drawLane(lane) {
  const { ctx, W, H, dpr, start, VIEW, x } = axis(lane.els.canvas, TIMELINE_PX);
  ctx.clearRect(0, 0, W, H);
  // a time grid (lines every `grid` ms, labels every five lines) that stays legible at any zoom
  const grid = VIEW <= 30_000 ? 1000 : VIEW <= 150_000 ? 5000 : 30_000;
  ctx.fillStyle = '#e6e8ec';
  for (let s = Math.ceil(start / grid) * grid; s <= start + VIEW; s += grid) {
    ctx.fillRect(Math.round(x(s)), 0, 1, H);
  }
  ctx.fillStyle = '#5c6370';
  ctx.font = `${10 * dpr}px system-ui, sans-serif`;
  for (let s = Math.ceil(start / (5 * grid)) * 5 * grid; s <= start + VIEW; s += 5 * grid) {
    const text = gridLabel(s);
    if (state.mode === 'live' && x(s) + 2 * dpr + ctx.measureText(text).width > W) break; // a time of day is shown whole
    ctx.fillText(text, x(s) + 2 * dpr, H - 2 * dpr);
  }
  // spans the server imposed
  const span = (spans, color) => {
    ctx.fillStyle = color;
    for (const [a, b] of spans) {
      if (b < start || a > start + VIEW) continue;
      ctx.fillRect(x(a), 0, Math.max(1, x(b) - x(a)), H);
    }
  };
  span(lane.cooldowns, 'rgba(214, 40, 40, 0.14)');
  span(lane.serverQuota, 'rgba(140, 90, 43, 0.16)');
  // departures, stacked when they share a pixel column; a full column says how many it holds
  const base = H - 14 * dpr;
  const mark = MARK_PX * dpr;
  const step = STACK_PX * dpr;
  const maxStack = Math.floor((base - mark - 10 * dpr) / step);
  const markW = Math.max(3, 3 * dpr);
  const label = (px, count) => {
    ctx.fillStyle = '#111';
    ctx.fillText(`×${count}`, px + markW + 2 * dpr, base - mark - maxStack * step + 10 * dpr);
  };
  let col = -1;
  let stack = 0;
  const end = upperBound(lane.times, start + VIEW);
  for (let i = lowerBound(lane.times, start); i < end; i++) {
    const px = Math.floor(x(lane.times[i]));
    if (px === col) {
      stack++;
    } else {
      if (stack >= maxStack) label(col, stack + 1);
      col = px;
      stack = 0;
    }
    if (stack < maxStack) {
      ctx.fillStyle = LAYER_COLORS[lane.layers[i]] ?? '#000';
      ctx.fillRect(px, base - mark - stack * step, markW, mark);
    }
  }
  if (stack >= maxStack) label(col, stack + 1);
  // links robots.txt refused: a ✕ above the baseline where the departure would have been asked for
  ctx.strokeStyle = VIOLATION_COLOR;
  ctx.lineWidth = Math.max(1, dpr);
  for (let i = lowerBound(lane.refused, start); i < upperBound(lane.refused, start + VIEW); i++) {
    const px = x(lane.refused[i]);
    const y = base - mark - maxStack * step + 2 * dpr;
    const r = 3 * dpr;
    ctx.beginPath();
    ctx.moveTo(px - r, y - r);
    ctx.lineTo(px + r, y + r);
    ctx.moveTo(px + r, y - r);
    ctx.lineTo(px - r, y + r);
    ctx.stroke();
  }
  // audit violations: a triangle over the departure that broke a rule
  ctx.fillStyle = VIOLATION_COLOR;
  for (const v of lane.violations) {
    if (v.atMs < start || v.atMs > start + VIEW) continue;
    const px = x(v.atMs);
    ctx.beginPath();
    ctx.moveTo(px - 4 * dpr, 0);
    ctx.lineTo(px + 4 * dpr, 0);
    ctx.lineTo(px, 7 * dpr);
    ctx.fill();
  }
  // the waiting link: where the module says it may go
  const now = presentMs();
  if (Number.isFinite(lane.nextTryMs) && lane.nextTryMs > now && lane.nextTryMs <= start + VIEW && lane.queued > 0) {
    ctx.strokeStyle = LAYER_COLORS[lane.waitLayer] ?? '#000';
    ctx.lineWidth = dpr;
    const px = x(Math.min(lane.nextTryMs, start + VIEW));
    ctx.strokeRect(px, base - mark, markW, mark);
  }
  // the server's answers that changed pacing: a flag at the instant, with what it said
  ctx.font = `${9 * dpr}px system-ui, sans-serif`;
  for (const a of lane.answers) {
    if (a.atMs < start || a.atMs > start + VIEW) continue;
    const px = Math.round(x(a.atMs));
    ctx.fillStyle = a.status >= 400 ? VIOLATION_COLOR : LAYER_COLORS.serverQuota;
    ctx.fillRect(px, 8 * dpr, Math.max(1, dpr), base - 8 * dpr);
    ctx.fillText(a.text, px + 2 * dpr, 16 * dpr);
  }
  // now, when in view
  if (now <= start + VIEW) {
    ctx.fillStyle = '#111';
    ctx.fillRect(Math.round(x(now)), 0, Math.max(1, dpr), H - 12 * dpr);
  }
  // the departure described under the pointer
  const { pointer } = state;
  if (pointer?.lane === lane && pointer.atMs !== undefined) {
    ctx.strokeStyle = '#111';
    ctx.lineWidth = dpr;
    ctx.strokeRect(Math.floor(x(pointer.atMs)) - 2 * dpr, base - mark - 2 * dpr, markW + 4 * dpr, mark + 4 * dpr);
  }
}

// The token level over the part of the run in view, on the timeline's time axis: tokens above the grey line (up
// to the capacity), tokens owed below it.
function drawChart(lane) {
  const { ctx, W, H, dpr, start, VIEW, pad, x } = axis(lane.els.chart, CHART_PX);
  const zero = Math.round(H * 0.68);
  const capacity = lane.capacity;
  const y = (tokens, debt) => zero - (Math.min(tokens, capacity) / capacity) * (zero - dpr) +
    (Math.min(debt, capacity) / capacity) * (H - zero - dpr);
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = '#c9ced6';
  ctx.fillRect(pad, zero, W - 2 * pad, Math.max(1, dpr));
  const from = Math.max(0, lowerBound(lane.sampleT, start) - 1);
  const to = Math.min(lane.sampleT.length, upperBound(lane.sampleT, start + VIEW) + 1);
  if (to - from < 1) return;
  ctx.beginPath();
  for (let i = from; i < to; i++) {
    const px = x(lane.sampleT[i]);
    const py = y(lane.sampleTokens[i], lane.sampleDebt[i]);
    if (i === from) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.strokeStyle = LAYER_COLORS.burst;
  ctx.lineWidth = 1.5 * dpr;
  ctx.stroke();
}

// The overview strip: the whole run, every host lane's departures as ticks, and the part in view.
function drawOverview() {
  const c = document.querySelector('#overview');
  const dpr = window.devicePixelRatio || 1;
  const W = Math.max(100, Math.round(c.clientWidth * dpr));
  const H = Math.round(28 * dpr);
  if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, W, H);
  const shown = board();
  const origin = originMs();
  const runMs = Math.max(presentMs() - origin, state.view.spanMs);
  const x = (t) => ((t - origin) / runMs) * W;
  ctx.fillStyle = 'rgba(214, 40, 40, 0.25)';
  for (const lane of shown) for (const [a, b] of lane.cooldowns) ctx.fillRect(x(a), 0, Math.max(1, x(b) - x(a)), H);
  const rowH = H / Math.max(1, shown.length);
  ctx.fillStyle = '#5c6370';
  // one tick per pixel column that holds a departure: after each tick, skip to the first departure of the next
  // column (a long log costs its columns, not its length)
  const msPerPx = runMs / W;
  shown.forEach((lane, k) => {
    const ts = lane.times;
    for (let i = 0; i < ts.length;) {
      const px = Math.floor(x(ts[i]));
      ctx.fillRect(px, k * rowH + rowH * 0.2, 1, Math.max(1, rowH * 0.6));
      const j = lowerBound(ts, origin + (px + 1) * msPerPx);
      i = j > i ? j : i + 1;
    }
  });
  const w = viewWindow();
  ctx.strokeStyle = '#1d5fd1';
  ctx.lineWidth = 2 * dpr;
  ctx.strokeRect(x(w.startMs) + dpr, dpr, Math.max(2 * dpr, x(w.startMs + w.spanMs) - x(w.startMs) - 2 * dpr), H - 2 * dpr);
}
