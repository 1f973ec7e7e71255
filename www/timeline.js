// Moving in time: the part of the run the timelines show (it follows the present, or stays where it was moved),
// the buttons' moves, and the departure under the pointer.

import { clockTime, layerName, sec } from './format.js';
import { lowerBound } from './sorted.js';
import { originMs, presentMs, state } from './state.js';

const MIN_VIEW_MS = 2_000; // zoomed all the way in
const MAX_VIEW_MS = 600_000; // zoomed all the way out
export const PAD_PX = 6; // t=0 sits this far (CSS px) inside a timeline's left edge
const POINTER_PX = 6; // a departure this close to the pointer (CSS px) is the one described

/** The part of the run in view, `{ startMs, spanMs, following }`: the last `spanMs` up to the present while
 * following it, else up to where the view was moved. */
export function viewWindow() {
  const { view } = state;
  const now = presentMs();
  const endMs = view.endMs === null ? now : Math.min(view.endMs, now);
  return { startMs: Math.max(originMs(), endMs - view.spanMs), spanMs: view.spanMs, following: view.endMs === null };
}

/** Shows `spanMs` of the run ending at `endMs` (null: the present, followed). */
export function setView(endMs, spanMs = state.view.spanMs) {
  const { view } = state;
  view.spanMs = Math.max(MIN_VIEW_MS, Math.min(MAX_VIEW_MS, spanMs));
  // the view's end, kept within the run; at the present it follows it again
  const now = presentMs();
  const end = Math.max(Math.min(originMs() + view.spanMs, now), Math.min(endMs, now));
  view.endMs = endMs === null || end >= now ? null : end;
  state.pointer = null;
  state.drawDirty = true;
  renderView();
}

/** Moves the view as the timeline buttons say: 'earlier', 'later', 'zoom-in', 'zoom-out', 'follow'. */
export function moveView(action) {
  const w = viewWindow();
  const end = w.startMs + w.spanMs;
  if (action === 'earlier') setView(Math.max(originMs() + w.spanMs / 2, end - w.spanMs / 2));
  else if (action === 'later') setView(end + w.spanMs / 2);
  else if (action === 'zoom-in') setView(w.following ? null : end - w.spanMs / 4, w.spanMs / 2);
  else if (action === 'zoom-out') setView(w.following ? null : end + w.spanMs / 2, w.spanMs * 2);
  else if (action === 'follow') setView(null);
  else throw new Error(`unknown timeline action: ${action}`);
}

/** Back to the present, with nothing under the pointer (a new run, or the other mode). */
export function resetView() {
  state.view.endMs = null;
  state.pointer = null;
  document.querySelector('#pointer').textContent = '';
}

/** Says which part of the run the timelines show, and whether they follow the present. */
export function renderView() {
  const w = viewWindow();
  const at = state.mode === 'live' ? clockTime : sec;
  document.querySelector('#view-range').value = `showing ${at(w.startMs)} – ${at(w.startMs + w.spanMs)}${w.following ? ' (the present)' : ''}`;
  for (const b of document.querySelectorAll('[data-view="follow"]')) b.setAttribute('aria-pressed', String(w.following));
}

/** Describes the departure nearest the pointer (within POINTER_PX) on `lane`'s timeline, at `clientX`. */
export function describePointer(lane, clientX) {
  const rect = lane.els.canvas.getBoundingClientRect();
  const { startMs, spanMs } = viewWindow();
  const t = startMs + ((clientX - rect.left - PAD_PX) / (rect.width - 2 * PAD_PX)) * spanMs;
  const tol = (POINTER_PX / (rect.width - 2 * PAD_PX)) * spanMs;
  // the nearer of the departures on either side of `t`, if it is close enough
  const j = lowerBound(lane.times, t);
  const near = [j - 1, j].filter((k) => k >= 0 && k < lane.times.length && Math.abs(lane.times[k] - t) <= tol);
  const i = near.sort((a, b) => Math.abs(lane.times[a] - t) - Math.abs(lane.times[b] - t))[0];
  state.pointer = { lane, i, atMs: lane.times[i] };
  const to = lane.kind === 'site' ? ` to ${lane.from[i]}` : '';
  document.querySelector('#pointer').textContent = i === undefined ? '' : lane.kind === 'live' ? liveDeparture(lane, i)
    : `${lane.host}: departure ${lane.dropped + i + 1}${to} at ${sec(lane.times[i])}, waited ${sec(lane.waits[i])}, ` +
      `set by ${layerName(lane.layers[i])}`;
  state.drawDirty = true;
}

/** Nothing under the pointer. */
export function clearPointer() {
  state.pointer = null;
  document.querySelector('#pointer').textContent = '';
  state.drawDirty = true;
}

// A live lane's departure `i` in words: when it left (the gateway's clock), its wait and what set it, its answer.
function liveDeparture(lane, i) {
  const status = lane.statuses[i];
  const answer = status === null ? 'no answer reported yet' : status === 0 ? 'no answer came' : `answered ${status}`;
  return `${lane.host}: ${lane.purposes[i] === 'robots' ? 'robots.txt ' : ''}departure at ${clockTime(lane.times[i], true)}, ` +
    `waited ${sec(lane.waits[i])}, set by ${layerName(lane.layers[i])}, ${answer}`;
}
