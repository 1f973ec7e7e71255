// The board: one lane per host, built from the page's template, with its readouts (the text and the level bars,
// refreshed at 10 Hz) and its canvases (drawn when something changed). Grouped by site, the hosts of a site are
// rows of one site lane, headed by the site's own levels and its hosts' departures together (a host without a site
// keeps a lane alone). Every number shown is a lane's level as the module or the gateway reports it (lanes.js), or
// a count of the lane's own access log.

import { CHART_PX, TIMELINE_PX, drawBoard } from './draw.js';
import { clockTime, num, sec } from './format.js';
import { levels } from './lanes.js';
import { POLL_MS, TOLERANCE_MS } from './live.js';
import { board, drawnLanes, presentMs, state } from './state.js';
import { renderView } from './timeline.js';

const TEXT_EVERY_MS = 100; // text readouts refresh at 10 Hz, timelines every frame
const SLOT_CELLS = 8; // reserved future departures drawn as slots
const MAX_SEATS = 20; // permits drawn as seats (more are counted in the text)
const KIND_NAMES = {
  token: 'token bucket only', leaky: 'leaky bucket only', layered: 'hostpace (layered)', live: 'through the gateway (live)',
  site: 'site: its hosts paced as one',
};
const SITE_ROWS = ['tokens', 'slot', 'quota', 'rate']; // a site has no cooldown and no permits of its own
const lanesEl = document.querySelector('#lanes');
const template = document.querySelector('#lane-template');
let textDue = 0; // when the text readouts are next refreshed (performance.now())

/** The board built again (its lanes changed) and drawn at once. */
export function showBoard() {
  buildLanes();
  renderView();
  render(true);
}

/** Draws what changed: the text readouts at 10 Hz, the timelines, charts and overview when dirty. One present is
 * used for the whole of it (live mode's clock moves while it draws). */
export function render(force = false) {
  const now = performance.now();
  state.renderNow = presentMs();
  try {
    if (force || now >= textDue) {
      textDue = now + TEXT_EVERY_MS;
      renderText();
    }
    if (force || state.drawDirty) {
      drawBoard();
      state.drawDirty = false;
    }
  } finally {
    state.renderNow = null;
  }
}

// Builds the board's lanes from the template (and says why there are none, when there are none): a lane per host,
// or per site with its hosts' lanes inside it (they sit next to each other on the board).
export function buildLanes() {
  lanesEl.replaceChildren();
  for (const lane of board()) {
    if (!lane.siteLane) lanesEl.append(laneNode(lane, 'lane'));
    else if (lane.siteLane.hosts[0] === lane) lanesEl.append(siteNode(lane.siteLane));
  }
  if (state.mode === 'live' && !state.live.list.length) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'No host yet: each host this token sends requests to through the gateway gets a lane here.';
    lanesEl.append(p);
  } else if (state.mode === 'simulated' && state.configError) {
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = `No lanes: ${state.configError}`;
    lanesEl.append(p);
  }
  sizeCanvases();
}

// A site's lane: its head (the site's levels, timeline and chart, from the lane template) over its hosts' lanes.
function siteNode(site) {
  const node = document.createElement('section');
  node.className = 'site';
  const n = site.hosts.length;
  node.setAttribute('aria-label', `site ${site.host}, ${n} host${n === 1 ? '' : 's'}`);
  const hosts = document.createElement('div');
  hosts.className = 'site-hosts';
  hosts.append(...site.hosts.map((lane) => laneNode(lane, 'lane')));
  node.append(laneNode(site, 'site-head'), hosts);
  return node;
}

// One lane's node from the template (`className`: 'lane', or 'site-head' for a site's own row), its elements kept
// in `lane.els`.
function laneNode(lane, className) {
  const node = template.content.firstElementChild.cloneNode(true);
  node.className = className;
  node.dataset.kind = lane.kind;
  node.querySelector('.host').textContent = lane.host;
  node.querySelector('.kind').textContent = lane.kind === 'site'
    ? `site: its ${lane.hosts.length} host${lane.hosts.length === 1 ? '' : 's'} paced as one` : KIND_NAMES[lane.kind];
  node.setAttribute('aria-label', `${lane.host}, ${lane.kind}`);
  lane.els = {
    node,
    summary: node.querySelector('.summary'),
    level: node.querySelector('.level'),
    owed: node.querySelector('.owed'),
    slots: node.querySelector('.slots'),
    slotFill: node.querySelector('.slot-fill'),
    seats: node.querySelector('.seats'),
    quotaFill: node.querySelector('.quota-fill'),
    countdownFill: node.querySelector('.countdown-fill'),
    tokens: node.querySelector('.tokens'),
    slot: node.querySelector('.slot'),
    quota: node.querySelector('.quota'),
    cooldown: node.querySelector('.cooldown'),
    inflight: node.querySelector('.inflight'),
    rate: node.querySelector('.rate'),
    canvas: node.querySelector('canvas.timeline'),
    chart: node.querySelector('canvas.chart'),
    differs: node.querySelector('.differs'),
    text: {},
    style: new Map(),
  };
  // a bare bucket has no quota, cooldown, permits or adaptive rate (and a leaky one no tokens), a site no cooldown
  // or permits: those rows go
  const shown = { token: ['tokens', 'slot'], leaky: ['slot'], site: SITE_ROWS }[lane.kind];
  if (shown) {
    for (const key of ['tokens', 'slot', 'quota', 'cooldown', 'inflight', 'rate']) {
      if (!shown.includes(key)) lane.els[key].closest('.levels > div').hidden = true;
    }
  }
  lane.els.chart.hidden = lane.kind === 'leaky';
  lane.els.chart.setAttribute('aria-label', lane.kind === 'site'
    ? `Token level of the site ${lane.host} over the part of the run in view`
    : `Token level of ${lane.host} over the part of the run in view`);
  // the gateway reports no departures reserved ahead: a live lane's slot shows the next one's countdown only
  lane.els.slots.append(...cells(lane.kind === 'live' ? 0 : SLOT_CELLS));
  lane.els.seats.append(...cells(seatCount(lane)));
  return node;
}

// Permits drawn as seats on a lane: the configured concurrency (the gateway's, for a live lane), at most MAX_SEATS.
function seatCount(lane) {
  if (lane.kind === 'site') return 0;
  const permits = lane.kind === 'live' ? lane.report?.policy.maxConcurrency ?? 0 : state.settings.maxConcurrency;
  return Math.min(permits, MAX_SEATS);
}

// Sizes each lane's canvases to their CSS width at the device's pixel ratio.
export function sizeCanvases() {
  const dpr = window.devicePixelRatio || 1;
  for (const lane of drawnLanes()) {
    const c = lane.els.canvas;
    const w = Math.max(100, Math.round(c.clientWidth * dpr));
    const h = Math.round(TIMELINE_PX * dpr);
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const chart = lane.els.chart;
    const ch = Math.round(CHART_PX * dpr);
    if (chart.width !== w || chart.height !== ch) { chart.width = w; chart.height = ch; }
  }
  state.drawDirty = true;
}

const cells = (n) => Array.from({ length: n }, () => document.createElement('i'));

// Set a style property or an attribute only when it changes (the text readouts refresh at 10 Hz).
function setStyle(lane, el, prop, value) {
  const key = `${el.className}.${prop}`;
  if (lane.els.style.get(key) !== value) {
    lane.els.style.set(key, value);
    el.style[prop] = value;
  }
}

// Marks the first `taken` cells of a row of slots or seats as taken.
function fillCells(el, taken) {
  for (let i = 0; i < el.children.length; i++) el.children[i].classList.toggle('taken', i < taken);
}

// Sets a lane's text readout only when it changes.
function setText(lane, key, value) {
  if (lane.els.text[key] !== value) {
    lane.els.text[key] = value;
    lane.els[key].textContent = value;
  }
}

// The text readouts and level bars of every lane, at the present.
function renderText() {
  document.querySelector('#clock').value = `${(state.clockMs / 1000).toFixed(1)} s`;
  renderView();
  const now = presentMs();
  for (const lane of drawnLanes()) {
    const lv = levels(lane);
    const isLive = lane.kind === 'live';
    const v = lane.violations.length;
    if (isLive) {
      // the gateway's own line for the host, dated when the gateway has not answered for a while
      const stale = now - lane.reportAtMs > 3 * POLL_MS ? `as of ${clockTime(lane.reportAtMs)} · ` : '';
      setText(lane, 'summary', stale + lane.summary);
    } else if (lane.kind === 'site') {
      const n = lane.hosts.length;
      setText(lane, 'summary', `${lane.times.length + lane.dropped} sent by its host${n === 1 ? '' : 's'} · ${v} audit ` +
        `violation${v === 1 ? '' : 's'} of the site's limits`);
    } else {
      const queued = lane.queued === Infinity ? 'links keep coming' : `${lane.queued} queued`;
      setText(lane, 'summary', `${lane.times.length + lane.dropped} sent · ${queued} · ${v} audit violation${v === 1 ? '' : 's'}` +
        (lane.gaveUp ? ` · ${lane.gaveUp} given up` : '') +
        (lane.refusedCount ? ` · ${lane.refusedCount} refused by robots.txt` : ''));
    }
    // the token bucket: its level, and what is owed below the rim
    const capacity = lv.capacity ?? 1;
    const level = lv.tokens === undefined ? 0 : Math.min(1, lv.tokens / capacity);
    const owed = lv.tokenDebt ? Math.min(1, lv.tokenDebt / capacity) : 0;
    setStyle(lane, lane.els.level, 'height', `${(level * 100).toFixed(1)}%`);
    setStyle(lane, lane.els.owed, 'height', `${(owed * 0.6).toFixed(3)}rem`);
    setText(lane, 'tokens', lv.tokens === undefined ? '—'
      : `${num(lv.tokens)} of ${num(capacity, 2)}${lv.tokenDebt >= 0.05 ? ` · ${num(lv.tokenDebt)} owed` : ''}`);
    // the leaky layer: the time left until its next slot (a bar over one slot's length), and the future slots
    // already reserved
    const slotMs = lv.intervalMs || lane.slotMs || 1000 / (lv.ratePerSec || 1);
    setStyle(lane, lane.els.slotFill, 'width', `${(Math.min(1, (lv.nextSlotInMs ?? 0) / slotMs) * 100).toFixed(1)}%`);
    fillCells(lane.els.slots, lv.reservedAhead ?? 0);
    const floor = lv.intervalMs ? ` (floor ${sec(lv.intervalMs)}${lv.crawlDelayMs ? ', Crawl-delay' : ''})` : '';
    const next = lv.nextSlotInMs === undefined ? '' : `next in ${sec(lv.nextSlotInMs)}${floor}`;
    setText(lane, 'slot', isLive ? next || '—' : `${lv.reservedAhead} reserved ahead${next ? ` · ${next}` : ''}`);
    // the quota: a window that fills
    setStyle(lane, lane.els.quotaFill, 'width', lv.quotaLimit ? `${(Math.min(1, lv.quotaUsed / lv.quotaLimit) * 100).toFixed(1)}%` : '0%');
    setText(lane, 'quota', lv.quotaLimit ? `${lv.quotaUsed} of ${lv.quotaLimit} in ${num(lv.quotaWindowSec ?? state.settings.quotaWindowSec)} s`
      : lane.kind === 'layered' || lane.kind === 'site' || isLive ? 'off' : '—');
    // the cooldown or the server's block: a countdown
    const block = lv.cooldownRemainingMs > 0 ? ['cooldown', lv.cooldownRemainingMs, lane.cooldowns]
      : lv.serverQuotaRemainingMs > 0 ? ['server quota', lv.serverQuotaRemainingMs, lane.serverQuota] : null;
    const span = block?.[2].at(-1);
    const total = span ? Math.max(1, span[1] - span[0]) : 1;
    setStyle(lane, lane.els.countdownFill, 'width', block ? `${(Math.min(1, block[1] / total) * 100).toFixed(1)}%` : '0%');
    setText(lane, 'cooldown', lv.cooldownRemainingMs === undefined ? '—'
      : block ? `${block[0] === 'cooldown' ? '' : 'server quota '}${sec(block[1])} left` : 'none');
    // permits: seats taken
    const permits = lv.maxConcurrency ?? state.settings.maxConcurrency;
    if (lane.els.seats.children.length !== seatCount(lane)) lane.els.seats.replaceChildren(...cells(seatCount(lane)));
    fillCells(lane.els.seats, lv.inFlight ?? 0);
    setText(lane, 'inflight', lv.inFlight === undefined ? '—'
      : permits > 0 ? `${lv.inFlight} of ${permits} taken` : `${lv.inFlight} in flight (no limit)`);
    setText(lane, 'rate', lv.ratePerSec === undefined ? '—' : `${num(lv.ratePerSec, 2)}/s` +
      (lv.serverRateCap !== undefined ? ` (the server's policy caps it at ${num(lv.serverRateCap, 2)}/s)` : ''));
    // a site's line is always there: its hosts' departures together, as the site sees them
    setText(lane, 'differs', isLive ? liveVerdict(lane) : state.settings.compare || lane.kind === 'site' ? accessLogLine(lane) : '');
    lane.els.canvas.setAttribute('aria-label', lane.kind === 'site'
      ? `Access log of the site ${lane.host} (its hosts' departures together): ${lane.times.length + lane.dropped} departures, ${v} audit violations`
      : `Access log of ${lane.host} (${lane.kind}): ${lane.times.length + lane.dropped} departures, ${v} audit violations`);
  }
}

// A live lane's verdict: the module's audit of the departures seen, with the tolerance it was given.
function liveVerdict(lane) {
  const head = `Audit (the module's, ${TOLERANCE_MS} ms tolerance for network jitter)`;
  if (lane.auditError) return `${head}: not possible: ${lane.auditError}`;
  const n = lane.times.length + lane.dropped;
  const v = lane.violations.length;
  if (!v) return `${head}: no violation in ${n} departure${n === 1 ? '' : 's'} seen`;
  const kinds = new Map();
  for (const x of lane.violations) kinds.set(x.kind, (kinds.get(x.kind) ?? 0) + 1);
  const which = [...kinds].map(([k, c]) => `${c} ${k}`).join(', ');
  return `${head}: ${v} violation${v === 1 ? '' : 's'} (${which}) in ${n} departure${n === 1 ? '' : 's'} seen`;
}

// In compare mode, what a lane's access log shows that the others' do not, in one line: its busiest second, its
// two closest departures, and what went during a Retry-After.
function accessLogLine(lane) {
  const ts = lane.times;
  let busiest = 0;
  let closest = Infinity;
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i] - ts[j] >= 1000) j++;
    busiest = Math.max(busiest, i - j + 1);
    if (i > 0) closest = Math.min(closest, ts[i] - ts[i - 1]);
  }
  const during = ts.filter((t) => lane.cooldowns.some(([a, b]) => t > a && t < b)).length;
  return `Access log: at most ${busiest} in one second · the closest two ${closest === Infinity ? '—' : sec(closest)} apart` +
    (lane.cooldowns.length ? ` · ${during} sent during a Retry-After` : '');
}
