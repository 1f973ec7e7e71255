// Live mode on the page: whether a gateway serves it, the token field, switching between the simulated scenarios
// and the gateway's hosts, and folding each answer of the gateway into the board (live.js reads the gateway and
// shapes its lanes).

import * as hostpace from './pkg/browser.js';
import { buildLanes, render } from './board.js';
import { num } from './format.js';
import { GatewayClient, POLL_MS, TOLERANCE_MS, liveLane, mergeHost } from './live.js';
import { renderControls } from './panel.js';
import { state } from './state.js';
import { resetView } from './timeline.js';

const MODE_KEY = 'hostpace-playground-mode'; // sessionStorage: a reload of a live page comes back live
const $ = (sel) => document.querySelector(sel);
const tokenField = $('#live-token');
const { live } = state;

/** Makes the gateway client (it reads a token kept in this tab, asks nothing yet). */
export function initLive() {
  live.client = new GatewayClient({ periodMs: POLL_MS, onAnswer: liveAnswer, onChange: renderLiveStatus });
  document.addEventListener('visibilitychange', renderLiveStatus);
}

/** Asks /healthz once whether a gateway serves the page: live mode is offered only then (from a static server it
 * stays hidden and nothing else is asked), and a page that was live before a reload is live again. */
export async function checkGateway() {
  const gateway = await live.client.probe();
  live.checked = true;
  document.documentElement.dataset.gateway = gateway ? 'yes' : 'no';
  if (!gateway) return;
  renderControls();
  renderLiveStatus();
  let wasLive = false;
  try { wasLive = sessionStorage.getItem(MODE_KEY) === 'live'; } catch { wasLive = false; }
  if (wasLive) enterLive();
}

/** Switches the board to the live gateway (when one serves the page) and starts polling it. */
export function enterLive() {
  if (!live.client.gateway || state.mode === 'live') return;
  state.mode = 'live';
  switchedMode();
  live.client.start();
  if (!live.client.hasToken) tokenField.focus();
}

/** Back to the simulated scenarios: polling stops, the live lanes are kept for a return. */
export function leaveLive() {
  if (state.mode !== 'live') return;
  live.client.stop();
  state.mode = 'simulated';
  switchedMode();
}

/** Uses the token in the field, if it is a new one or the gateway refused it (an empty field keeps the one in
 * use): the lanes start again, polling goes on with it. */
export function useToken() {
  const token = tokenField.value.trim();
  if (token === '' || (live.client.uses(token) && !live.client.refused)) return;
  if (live.client.setToken(token)) resetLive();
}

/** Uses `token` as the token field does (kept in sessionStorage; '' forgets it); false when it cannot be a bearer
 * token. */
export function setToken(token) {
  tokenField.value = String(token);
  if (live.client.uses(token)) return true;
  const ok = live.client.setToken(token);
  if (ok) resetLive();
  return ok;
}

/** Forgets the token (sessionStorage included) and the lanes it showed. */
export function forgetToken() {
  tokenField.value = '';
  if (live.client.hasToken && live.client.setToken('')) resetLive();
}

/** Live mode's requests so far: `{ polls, requests, errors, lastError, periodMs, polling, inFlight, offsetMs }`. */
export function liveStats() {
  const c = live.client;
  return { ...c.counts, periodMs: c.periodMs, polling: c.polling, inFlight: c.inFlight, offsetMs: c.offsetMs };
}

// A gateway answer (`GET /v1/hosts?detail=1`): each host's report folded into its lane; a new host gets a lane.
function liveAnswer(body) {
  if (!Number.isFinite(live.since)) live.since = body.nowMs;
  let added = false;
  for (const entry of body.hosts) {
    if (!entry || typeof entry.host !== 'string') continue;
    let lane = live.lanes.get(entry.host);
    if (!lane) {
      lane = liveLane(entry.host);
      live.lanes.set(entry.host, lane);
      added = true;
    }
    mergeHost(lane, entry, body.nowMs, hostpace.pushesBack);
  }
  live.list = [...live.lanes.values()];
  live.origin = live.since;
  for (const lane of live.list) if (lane.times.length && lane.times[0] < live.origin) live.origin = lane.times[0];
  if (state.mode !== 'live') return;
  if (added) buildLanes();
  renderLivePolicy();
  state.drawDirty = true;
}

// Forgets every live lane (another token sees other hosts).
function resetLive() {
  live.lanes.clear();
  live.list = [];
  live.since = NaN;
  live.origin = NaN;
  state.pointer = null;
  if (state.mode === 'live') {
    buildLanes();
    renderLivePolicy();
    render(true);
  }
}

// What a change of mode redraws: the lanes, the controls, the view (it follows the present again).
function switchedMode() {
  try {
    if (state.mode === 'live') sessionStorage.setItem(MODE_KEY, 'live');
    else sessionStorage.removeItem(MODE_KEY);
  } catch {
    // storage refused: the mode lasts as long as the page
  }
  resetView();
  buildLanes();
  renderControls();
  renderLivePolicy();
  renderLiveStatus();
  render(true);
}

// The connection's state in words: what /healthz said (configuration problems included) and how polling goes.
function renderLiveStatus() {
  const c = live.client;
  const g = c.gateway;
  if (!g) return;
  const problems = g.ok === true ? '' : `The gateway reports problems${g.problems.length ? `: ${g.problems.join('; ')}` : ''}. `;
  const paused = state.mode === 'live' && c.hasToken && document.visibilityState === 'hidden' ? ' (paused while the tab is hidden)' : '';
  $('#live-status').textContent = `${problems}${c.status}${paused}`;
  $('#live-status').classList.toggle('error', Boolean(problems || c.counts.lastError));
  tokenField.placeholder = c.hasToken ? 'kept for this tab' : '';
}

// The gateway's policy, as its latest report states it.
function renderLivePolicy() {
  const g = live.client.gateway;
  const p = live.list.find((l) => l.report)?.report.policy;
  $('#live-version').textContent = g ? `gateway ${g.version}` : '';
  if (!p) {
    $('#live-policy').textContent = '';
    return;
  }
  const quota = p.quota ? `${p.quota.limit} per ${num(p.quota.windowSec)} s` : 'off';
  $('#live-policy').textContent = `The gateway's policy: ${num(p.ratePerSec, 2)} requests/s, burst ${num(p.burstCapacity, 2)}, ` +
    `interval floor ${num(p.minIntervalSec, 2)} s (raised by a host's Crawl-delay), quota ${quota}, ` +
    `${p.maxConcurrency ? `${p.maxConcurrency} permits` : 'permits unlimited'}, max backoff ${num(p.maxBackoffSec)} s, ` +
    `${p.maxRetries} retries. Each lane's access log is audited against it with a ${TOLERANCE_MS} ms tolerance.`;
}
