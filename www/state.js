// What the page's modules share, in one place: the mode, the scenario and its settings, the virtual clock, the
// simulated lanes and the limiter behind them, the sites that group them, the live lanes, the part of the run in
// view and the pointer.
// Everything else a module keeps is its own.

export const VIEW_MS = 24_000; // virtual milliseconds a timeline shows at first

export const state = {
  mode: 'simulated', // 'simulated' | 'live'
  scenario: 'discover',
  settings: null, // the scenario's settings, as the controls show them (settings.js)
  speed: 1, // the virtual clock's speed (0: paused)
  clockMs: 0, // the virtual clock: ms since the scenario started
  limiter: null, // one Limiter for every layered lane (one registry, many hosts), as a crawler would hold
  lanes: [], // the simulated lanes (one per host; the hosts of one site next to each other)
  // grouped by site: one lane per site the hosts belong to (kind 'site': its own levels, and its hosts' departures
  // together), each lane of a host with a site pointing at it (`siteLane`)
  sites: [],
  configError: '', // why the settings make no limiter ('' when they do)
  // the part of the run the timelines show: `spanMs` ending at `endMs` (null: the present, followed)
  view: { spanMs: VIEW_MS, endMs: null },
  pointer: null, // { lane, i, atMs }: the departure under the pointer
  drawDirty: true, // the canvases need drawing
  frameTs: null, // the timestamp of the last animation frame (null: the clock starts again from the next one)
  renderNow: null, // the present a render in progress uses
  live: {
    client: null, // the GatewayClient (live.js)
    checked: false, // whether /healthz has been asked
    lanes: new Map(), // host → lane
    list: [], // the lanes, in the order their hosts first appeared
    since: NaN, // the gateway's clock when the page first heard from it with this token
    origin: NaN, // where the live run starts: its earliest departure seen, or `since`
  },
};

/** The lanes on the board: the simulated ones, or in live mode the hosts the gateway token has used. */
export function board() {
  return state.mode === 'live' ? state.live.list : state.lanes;
}

/** The site lanes on the board (none in live mode). */
export function siteLanes() {
  return state.mode === 'live' ? [] : state.sites;
}

/** Every lane drawn: the host lanes on the board, then the site lanes. */
export function drawnLanes() {
  return state.mode === 'live' ? state.live.list : [...state.lanes, ...state.sites];
}

/** The board's present: the virtual clock, or in live mode the gateway's clock (this page's plus its offset),
 * held still while a render draws. */
export function presentMs() {
  if (state.mode !== 'live') return state.clockMs;
  return state.renderNow ?? Date.now() + (state.live.client?.offsetMs ?? 0);
}

/** Where the board's run starts: t=0 of the scenario, or the live run's start (the present until a first answer). */
export function originMs() {
  if (state.mode !== 'live') return 0;
  return Number.isFinite(state.live.origin) ? state.live.origin : presentMs();
}
