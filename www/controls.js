// What the person does: the controls' events (settings, scenarios, speed, step, live mode, the token field, the
// link to copy), moving in time (the timeline buttons, the wheel, the overview, the pointer), and the actions
// they take, which `window.playground` takes too.

import { render, showBoard, sizeCanvases } from './board.js';
import { enterLive, forgetToken, leaveLive, useToken } from './live-mode.js';
import { renderControls } from './panel.js';
import { SITE_KEYS, fromControl, isSetting, readHash, scenarioSettings, withSettings, writeHash } from './settings.js';
import { restart, step } from './simulation.js';
import { drawnLanes, originMs, presentMs, state } from './state.js';
import { clearPointer, describePointer, moveView, resetView, setView, viewWindow } from './timeline.js';

const $ = (sel) => document.querySelector(sel);

/** Starts the scenario again at t=0 and shows it, following the present. */
export function replay() {
  restart();
  resetView();
  showBoard();
}

/** Replays the scenario with the settings, and shows them in the controls and the URL. */
export function apply() {
  replay();
  renderControls();
  writeHash(state.scenario, state.settings);
}

/** Loads scenario `name` with its settings and replays it. */
export function loadScenario(name) {
  state.settings = scenarioSettings(name, state.settings);
  state.scenario = name;
  apply();
}

/** Changes some settings (`{ name: value }`) and replays the scenario. */
export function set(partial) {
  state.settings = withSettings(state.settings, partial);
  apply();
}

/** Sets the virtual clock's speed (0 pauses it). */
export function setSpeed(x) {
  state.speed = x;
  state.frameTs = null;
  renderControls();
}

/** Advances the virtual clock to the next event, and draws. */
export function stepAndShow() {
  setSpeed(0);
  step();
  render(true);
}

/** Listens to the controls, the timelines and the URL hash. */
export function wireControls() {
  const form = $('#controls');
  const lanesEl = $('#lanes');
  const tokenField = $('#live-token');
  form.addEventListener('change', (e) => {
    const el = e.target;
    if (!el.name || !isSetting(el.name)) return;
    if (el.type === 'checkbox') { set({ [el.name]: el.checked }); return; }
    if (el.tagName === 'SELECT') { set({ [el.name]: el.value }); return; }
    if (el.value === '' && SITE_KEYS.includes(el.name)) { set({ [el.name]: null }); return; } // the config's
    if (el.value === '' || !Number.isFinite(Number(el.value))) return;
    set({ [el.name]: fromControl(el.name, Number(el.value)) });
  });
  form.addEventListener('submit', (e) => e.preventDefault());
  // the token is used when it is entered (Enter, or leaving the field)
  tokenField.addEventListener('change', useToken);
  tokenField.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); useToken(); }
  });
  form.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.dataset.scenario) { leaveLive(); loadScenario(b.dataset.scenario); }
    else if (b.id === 'live-enter') enterLive();
    else if (b.id === 'live-leave') leaveLive();
    else if (b.id === 'live-connect') useToken();
    else if (b.id === 'live-forget') forgetToken();
    else if (b.dataset.speed !== undefined) setSpeed(Number(b.dataset.speed));
    else if (b.id === 'step') stepAndShow();
    else if (b.id === 'restart') replay();
    else if (b.id === 'copy-link') {
      writeHash(state.scenario, state.settings);
      navigator.clipboard?.writeText(location.href).then(() => { b.textContent = 'Link copied'; }, () => {});
    }
  });
  // moving in time: the timeline buttons, the wheel over the lanes (with Ctrl: zoom), a click on the overview
  $('.timenav').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-view]');
    if (b) moveView(b.dataset.view);
  });
  lanesEl.addEventListener('wheel', (e) => {
    // a plain vertical wheel scrolls the page; sideways, or with Shift, it moves in time; with Ctrl it zooms
    const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY);
    if (!e.target.matches('canvas') || !(sideways || e.shiftKey || e.ctrlKey)) return;
    e.preventDefault();
    const w = viewWindow();
    const end = w.startMs + w.spanMs;
    const delta = sideways ? e.deltaX : e.deltaY;
    if (e.ctrlKey) setView(w.following ? null : end, w.spanMs * (delta > 0 ? 1.25 : 0.8));
    else setView(end + (delta / 500) * w.spanMs);
  }, { passive: false });
  $('#overview').addEventListener('click', (e) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const origin = originMs();
    const t = origin + ((e.clientX - rect.left) / rect.width) * Math.max(presentMs() - origin, state.view.spanMs);
    setView(t + state.view.spanMs / 2);
  });
  // paused (and always in live mode), the pointer over a timeline describes the departure under it
  lanesEl.addEventListener('pointermove', (e) => {
    if ((state.mode === 'simulated' && state.speed !== 0) || !e.target.matches('canvas')) return;
    const lane = drawnLanes().find((l) => l.els.canvas === e.target);
    if (lane) describePointer(lane, e.clientX);
  });
  lanesEl.addEventListener('pointerleave', clearPointer);
  window.addEventListener('hashchange', () => {
    const shared = readHash();
    if (!shared) return;
    Object.assign(state, shared);
    replay();
    renderControls();
  });
  new ResizeObserver(() => { sizeCanvases(); render(true); }).observe(lanesEl);
}
