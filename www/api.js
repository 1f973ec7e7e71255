// The page's state for tests and the curious (read state, not pixels): `window.playground`.
//
// `window.playground`, in both modes:
//   ready                  true once the module runs (the simulation starts at once; the gateway check follows)
//   mode                   'simulated' | 'live'
//   nowMs                  the board's present: the virtual clock (ms since the scenario started), or in live mode
//                          the gateway's clock (epoch ms: Date.now() + liveStats().offsetMs)
//   lanes                  one entry per host lane on the board, audited first. Simulated lanes: { host, kind
//                          ('token' | 'leaky' | 'layered'), site (grouped by site: the host's site, '*.example.com';
//                          else null), departures: [{ atMs, layer, waitMs }], violations, cooldowns, serverQuota,
//                          answers, robots, refused, queued, waitingFor, gaveUp, dropped, levels }.
//                          Live lanes, one per host the token has used, in the order they appeared: { host,
//                          kind: 'live', departures: [{ atMs, waitMs, layer, status, purpose }] (every departure
//                          seen, oldest first, deduplicated by atMs; status null until reported, 0 for no answer),
//                          violations (the module's audit: [{ kind, atMs, ... }]), auditError, toleranceMs,
//                          auditConfig (the config audited against), cooldowns and serverQuota ([startMs, endMs]
//                          from when the page first saw them), answers ([{ atMs, status, text }]: the answers
//                          that pushed back, as the module's pushesBack says, at their departure), levels (the
//                          host's stats in the latest report as the gateway gave them, the times left counted down
//                          to nowMs, with quotaWindowSec and maxConcurrency from the policy and asOfMs), summary
//                          (the gateway's line), policy, robots, reportAtMs, dropped }. A simulated lane's levels
//                          are the module's stats of its host (a bare bucket's own readings) with reservedAhead.
//   groups                 the board as it is laid out: [{ site, hosts: [host, ...] }] in order, a site's lane with its
//                          hosts' lanes inside it, or { site: null, hosts: [host] } for a host lane alone (grouped by
//                          host, every lane; grouped by site, a host without a site: an IP address, localhost)
//   sites                  one entry per site lane (simulated, grouped by site), audited first: { site, hosts,
//                          departures: [{ atMs, host, layer, waitMs }] (its hosts' together, in time order),
//                          violations (the module's audit of them against the site's limits), dropped, levels (the
//                          module's stats of the site, with quotaWindowSec and reservedAhead) }
//   view, visible, chart   the part of the run the timelines show, the departures and token samples drawn in it
//                          (visible entries of live lanes also carry status and purpose)
//   moveView(action)       'earlier' | 'later' | 'zoom-in' | 'zoom-out' | 'follow', as the timeline buttons
//   frameStats()           { frames, workMs, frameIntervalMs } (each { samples, median, p95, max }); resetFrameStats()
// Live mode:
//   gatewayChecked         whether /healthz has been asked; gateway: null (no gateway: Live stays hidden) or
//                          { ok, version, problems } as /healthz said
//   enterLive(), leaveLive()   switch modes as the "Live gateway" and "Back to the simulated scenarios" buttons do
//                          (each returns the mode; enterLive does nothing without a gateway)
//   setToken(token)        use a token as the token field does (kept in sessionStorage; '' forgets it); false when
//                          it cannot be a bearer token
//   liveStatus             the connection's state, as the page says it
//   liveStats()            { polls (answers of /v1/hosts?detail=1, good or not), requests (every request live mode
//                          made, /healthz included), errors, lastError, periodMs, polling, inFlight, offsetMs }
//   nextLivePoll()         a promise of liveStats() once the next poll has been answered (it makes no request)
// Simulated mode: scenario, settings, config, configError, warnings, auditAvailable, exports, loadScenario(name),
// set(partial), setSpeed(x), restart(), pause(), advance(ms), step(), speed.

import * as hostpace from './pkg/browser.js';
import { render } from './board.js';
import { apply, loadScenario, set, setSpeed } from './controls.js';
import { auditAll, laneState } from './lanes.js';
import { enterLive, leaveLive, liveStats, setToken } from './live-mode.js';
import { frameStats, resetFrameStats } from './loop.js';
import { exports, warnings } from './panel.js';
import { limiterConfig } from './settings.js';
import { advanceTo, step } from './simulation.js';
import { lowerBound, upperBound } from './sorted.js';
import { board, presentMs, siteLanes, state } from './state.js';
import { moveView, viewWindow } from './timeline.js';

/** Sets `window.playground`. */
export function installApi() {
  window.playground = api;
}

// Each lane's entries of sorted `times` (its departures, or its chart's samples) in the view, made by `entry(i)`.
function inView(times, entry) {
  const { startMs, spanMs } = viewWindow();
  const out = [];
  for (let i = lowerBound(times, startMs); i < upperBound(times, startMs + spanMs); i++) out.push(entry(i));
  return out;
}

const api = {
  ready: true,
  get mode() { return state.mode; },
  get nowMs() { return presentMs(); },
  get speed() { return state.speed; },
  get scenario() { return state.scenario; },
  get settings() { return { ...state.settings }; },
  get config() { return limiterConfig(state.settings); },
  get configError() { return state.configError; },
  get warnings() { return warnings(); },
  get auditAvailable() { return typeof hostpace.audit === 'function'; },
  get exports() { return exports(); },
  get lanes() {
    auditAll();
    return board().map(laneState);
  },
  get sites() {
    auditAll();
    return siteLanes().map(laneState);
  },
  get groups() {
    const out = [];
    for (const lane of board()) {
      if (!lane.siteLane) out.push({ site: null, hosts: [lane.host] });
      else if (lane.siteLane.hosts[0] === lane) out.push({ site: lane.siteLane.host, hosts: lane.siteLane.hosts.map((l) => l.host) });
    }
    return out;
  },
  /** The part of the run the timelines show: `{ startMs, spanMs, following }`. */
  get view() { return viewWindow(); },
  /** Each lane's departures drawn in the view (`atMs`, `layer`, `waitMs`). */
  get visible() {
    return board().map((lane) => inView(lane.times, (i) => {
      const d = { atMs: lane.times[i], layer: lane.layers[i], waitMs: lane.waits[i] };
      if (lane.kind === 'live') Object.assign(d, { status: lane.statuses[i], purpose: lane.purposes[i] });
      return d;
    }));
  },
  /** Each lane's token level in the chart's view: `[atMs, tokens, tokenDebt]` (none for a bare leaky bucket). */
  get chart() {
    return board().map((lane) => inView(lane.sampleT, (i) => [lane.sampleT[i], lane.sampleTokens[i], lane.sampleDebt[i]]));
  },
  /** Move in time as the timeline buttons do: 'earlier', 'later', 'zoom-in', 'zoom-out', 'follow'. */
  moveView(action) { moveView(action); render(true); return viewWindow(); },
  loadScenario, set, setSpeed, restart: apply,
  pause() { setSpeed(0); },
  advance(ms) { advanceTo(state.clockMs + ms); render(true); return state.clockMs; },
  step() { step(); render(true); return state.clockMs; },
  frameStats,
  resetFrameStats,
  get gatewayChecked() { return state.live.checked; },
  get gateway() {
    const g = state.live.client.gateway;
    return g ? { ...g, problems: [...g.problems] } : null;
  },
  enterLive() { enterLive(); return state.mode; },
  leaveLive() { leaveLive(); return state.mode; },
  setToken,
  get liveStatus() { return document.querySelector('#live-status').textContent; },
  liveStats,
  async nextLivePoll() { await state.live.client.nextPoll(); return liveStats(); },
};
