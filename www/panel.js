// The controls as the state says: each setting's field, the scenario and speed buttons, the scenario's note, the
// module's warnings and config error, the exports, and whether live mode is offered.

import { snippet, wranglerVars } from './export.js';
import { num } from './format.js';
import { SCENARIOS } from './scenarios.js';
import { SITE_KEYS } from './settings.js';
import { newHostRatePerSec } from './simulation.js';
import { state } from './state.js';

const $ = (sel) => document.querySelector(sel);
const form = $('#controls');

/** The module's warnings about the settings' config (none when it refused it). */
export const warnings = () => (state.limiter ? state.limiter.warnings : []);

/** The exports of the settings: `{ js, vars }`. */
export const exports = () => ({ js: snippet(state.settings, warnings()), vars: wranglerVars(state.settings) });

/** Sets every control as the settings, the scenario, the speed and the mode say. */
export function renderControls() {
  const { settings, scenario, mode } = state;
  for (const el of form.elements) {
    if (!el.name || !(el.name in settings)) continue;
    const v = settings[el.name];
    if (el.type === 'checkbox') el.checked = Boolean(v);
    else if (el.tagName === 'SELECT') el.value = v;
    else if (v === null) { if (document.activeElement !== el || el.value !== '') el.value = ''; }
    else if (document.activeElement !== el || Number(el.value) !== v) el.value = String(v);
  }
  // a site's knobs count only when grouping by site; an empty one shows the config's knob it takes
  for (const k of SITE_KEYS) form.elements[k].disabled = settings.groupBy === 'host';
  const quota = settings.quotaLimit > 0 ? String(settings.quotaLimit) : 'none';
  const configs = {
    siteRatePerSec: settings.ratePerSec, siteBurstCapacity: settings.burstCapacity,
    siteMinIntervalSec: settings.minIntervalSec, siteMaxConcurrency: settings.maxConcurrency, siteQuotaLimit: quota,
    siteQuotaWindowSec: settings.quotaWindowSec,
  };
  for (const [k, v] of Object.entries(configs)) form.elements[k].placeholder = String(v);
  for (const b of form.querySelectorAll('[data-scenario]')) {
    b.setAttribute('aria-pressed', String(mode === 'simulated' && b.dataset.scenario === scenario));
  }
  // live mode: offered only when a gateway serves the page; the simulation's controls step aside while it is on
  document.documentElement.dataset.mode = mode;
  $('#live-enter').hidden = !state.live.client?.gateway;
  $('#live-enter').setAttribute('aria-pressed', String(mode === 'live'));
  for (const b of form.querySelectorAll('[data-speed]')) b.setAttribute('aria-pressed', String(Number(b.dataset.speed) === state.speed));
  // what the module answers about these settings, for the scenario's note
  const module = { get newHostRatePerSec() { return num(newHostRatePerSec(settings), 2); } };
  $('#scenario-note').textContent = `${SCENARIOS[scenario].title}: ${SCENARIOS[scenario].note(settings, module)}`;
  // N says what it is in this scenario, and is hidden where it plays no part
  const knob = SCENARIOS[scenario].knob;
  $('#n-knob').hidden = knob === null;
  $('#n-knob .knob').textContent = knob ?? 'N (seconds)';
  $('#config-error').textContent = state.configError;
  $('#warnings').replaceChildren(...warnings().map((w) => {
    const li = document.createElement('li');
    li.textContent = w;
    return li;
  }));
  const { js, vars } = exports();
  $('#export-js').value = js;
  $('#export-vars').value = vars;
}
