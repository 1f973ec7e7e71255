// What the board asks of any lane, simulated or live (a host's, or a site's): its levels, its audit, its state for
// `window.playground`.

import * as hostpace from './pkg/browser.js';
import { auditLiveLane, liveLaneState, liveLevels } from './live.js';
import { auditSimLane, simLaneState, simLevels, siteLaneState } from './simulation.js';
import { drawnLanes, presentMs } from './state.js';

/** What each layer of the lane's host holds at the present, as the module (or the gateway) reports it. */
export function levels(lane) {
  return lane.kind === 'live' ? liveLevels(lane, presentMs()) ?? {} : simLevels(lane);
}

/** Judges the lane's access log with the module's `audit`. */
export function auditLane(lane) {
  if (lane.kind === 'live') auditLiveLane(lane, hostpace.audit);
  else auditSimLane(lane);
}

/** Audits every lane on the board (sites too) whose log changed since its last audit. */
export function auditAll() {
  for (const lane of drawnLanes()) if (lane.auditDirty) auditLane(lane);
}

/** The lane as `window.playground.lanes` shows it. */
export function laneState(lane) {
  if (lane.kind === 'live') return liveLaneState(lane, presentMs());
  return lane.kind === 'site' ? siteLaneState(lane) : simLaneState(lane);
}
