// hostpace playground: lanes of target hosts, each driven by the hostpace wasm module under a virtual clock, or,
// served by a gateway, the hosts a gateway token has used as the gateway reports them (live mode).
//
// Nothing on this page computes a wait: every departure, the layer that set it, every level shown and every audit
// violation is an answer of the module (or of the gateway, whose core decided it). This file starts the page;
// each module has one job:
//   state.js       what the modules share (mode, scenario, settings, clock, lanes and sites, view)
//   scenarios.js   the scenarios and their servers' scripted answers
//   settings.js    the settings: defaults, the Limiter config they make, the URL hash that shares them
//   simulation.js  the simulated crawl over the module: crawler, servers, virtual clock, sites, levels, audit
//   live.js        the gateway client, and live lanes folded from its answers
//   live-mode.js   live mode on the page: the gateway check, the token, switching modes
//   lanes.js       what the board asks of any lane, simulated or live, a host's or a site's
//   board.js       the lanes' DOM and readouts, and render()
//   draw.js        the canvases: timelines, token charts, the overview
//   timeline.js    the part of the run in view, its moves, the departure under the pointer
//   panel.js       the controls as the state says; export.js the settings as code and as [vars]
//   controls.js    the controls' events and the actions they take
//   loop.js        the animation loop and its frame times
//   api.js         window.playground, for tests and the curious
//   format.js, sorted.js   numbers and times in words; binary search

import { installApi } from './api.js';
import { replay, wireControls } from './controls.js';
import { checkGateway, initLive } from './live-mode.js';
import { startLoop } from './loop.js';
import { renderControls } from './panel.js';
import { readHash, scenarioSettings, writeHash } from './settings.js';
import { state } from './state.js';

initLive();
Object.assign(state, readHash() ?? { scenario: 'discover', settings: scenarioSettings('discover') });
wireControls();
replay();
renderControls();
writeHash(state.scenario, state.settings);
installApi();
document.documentElement.dataset.ready = 'true';
startLoop();
checkGateway();
