// The settings the controls show: their defaults and types, the Limiter config they make, and the URL hash that
// shares them with a scenario (the gateway token never goes there).
//
// Most settings are numbers (or switches); `groupBy` is a word ('host' | 'site'), and a site's knobs may be empty
// (null: the config's knob is the site's too).

import { SCENARIOS } from './scenarios.js';

export const DEFAULTS = {
  ratePerSec: 2, burstCapacity: 4, minIntervalSec: 0, jitter: 0, quotaLimit: 0, quotaWindowSec: 60, maxConcurrency: 0,
  maxBackoffSec: 120, maxRetries: 3, adaptive: false, minRatePerSec: 0.25, targetLatencyMs: 1000, steps: 20,
  n: 10, hosts: 3, latencyMs: 200, compare: false,
  groupBy: 'host', siteRatePerSec: null, siteBurstCapacity: null, siteMinIntervalSec: null, siteMaxConcurrency: null,
  siteQuotaLimit: null, siteQuotaWindowSec: null,
};
const BOOLEAN_KEYS = ['adaptive', 'compare'];
const INTEGER_KEYS = ['quotaLimit', 'maxConcurrency', 'maxRetries', 'steps', 'hosts', 'siteQuotaLimit', 'siteMaxConcurrency'];
const WORD_KEYS = ['groupBy']; // taken as written: the module judges them
/** A site's knobs: empty (null) is the config's. */
export const SITE_KEYS = [
  'siteRatePerSec', 'siteBurstCapacity', 'siteMinIntervalSec', 'siteMaxConcurrency', 'siteQuotaLimit', 'siteQuotaWindowSec',
];

/** Whether `key` names a setting. */
export const isSetting = (key) => key in DEFAULTS;

/** The settings scenario `name` starts from, over `base`. */
export function scenarioSettings(name, base = DEFAULTS) {
  if (!(name in SCENARIOS)) throw new Error(`unknown scenario: ${name}`);
  return { ...base, ...SCENARIOS[name].settings };
}

/** `settings` with `partial` applied, each value of its setting's type (a control's text made a number). */
export function withSettings(settings, partial) {
  const out = { ...settings };
  for (const [k, v] of Object.entries(partial)) {
    if (!isSetting(k)) throw new Error(`unknown setting: ${k}`);
    out[k] = valueOf(k, v);
  }
  out.hosts = clampHosts(out.hosts);
  return out;
}

/** A number typed into the control of setting `key`, as that setting takes it (whole numbers rounded). */
export const fromControl = (key, value) => (INTEGER_KEYS.includes(key) ? Math.round(value) : value);

const clampHosts = (n) => Math.max(1, Math.min(20, Math.round(n) || 1));

// `v` as setting `k` takes it: a switch, a word, a number, or for a site's knob also none (null, or '').
function valueOf(k, v) {
  if (BOOLEAN_KEYS.includes(k)) return Boolean(v);
  if (WORD_KEYS.includes(k)) return String(v);
  if (SITE_KEYS.includes(k) && (v === null || v === '')) return null;
  return Number(v);
}

/** The Limiter config the settings make. */
export function limiterConfig(s) {
  const config = {
    ratePerSec: s.ratePerSec,
    burstCapacity: s.burstCapacity,
    minIntervalSec: s.minIntervalSec,
    jitter: s.jitter,
    maxConcurrency: s.maxConcurrency,
    maxBackoffSec: s.maxBackoffSec,
    maxRetries: s.maxRetries,
  };
  if (s.quotaLimit > 0) config.quota = { limit: s.quotaLimit, windowSec: s.quotaWindowSec };
  if (s.adaptive) config.adaptive = { minRatePerSec: s.minRatePerSec, targetLatencyMs: s.targetLatencyMs, steps: s.steps };
  if (s.groupBy !== 'host') {
    config.groupBy = s.groupBy;
    const site = siteLimits(s);
    if (Object.keys(site).length) config.siteLimits = site; // none set: a site is paced as one host would be
  }
  return config;
}

/** The config's `siteLimits`: the site's knobs that are set. A site's quota takes the config's window unless its own
 * is set, and the config's limit unless its own is set (with neither quota set, a window alone sets nothing). */
export function siteLimits(s) {
  const out = {};
  if (s.siteRatePerSec != null) out.ratePerSec = s.siteRatePerSec;
  if (s.siteBurstCapacity != null) out.burstCapacity = s.siteBurstCapacity;
  if (s.siteMinIntervalSec != null) out.minIntervalSec = s.siteMinIntervalSec;
  if (s.siteMaxConcurrency != null) out.maxConcurrency = s.siteMaxConcurrency;
  const limit = s.siteQuotaLimit ?? (s.quotaLimit > 0 ? s.quotaLimit : null);
  if (limit !== null && (s.siteQuotaLimit != null || s.siteQuotaWindowSec != null)) {
    out.quota = { limit, windowSec: s.siteQuotaWindowSec ?? s.quotaWindowSec };
  }
  return out;
}

/** The limits a site is held to under these settings, as `audit` takes them: the config's knobs with the site's set
 * ones (as the module paces a site: its own rate, burst, floor and quota; no adaptive pacing). */
export function siteAuditConfig(s) {
  const { groupBy, siteLimits: site, adaptive, ...config } = limiterConfig(s);
  return { ...config, ...site };
}

/** Writes the scenario and its settings into the URL hash. */
export function writeHash(scenario, settings) {
  const p = new URLSearchParams({ scenario });
  for (const k of Object.keys(DEFAULTS)) {
    p.set(k, BOOLEAN_KEYS.includes(k) ? (settings[k] ? '1' : '0') : String(settings[k] ?? ''));
  }
  const hash = `#${p}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

/** The scenario and settings the URL hash names, `{ scenario, settings }`; null when it names no scenario. */
export function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const scenario = p.get('scenario');
  if (!scenario || !(scenario in SCENARIOS)) return null;
  const settings = scenarioSettings(scenario);
  for (const k of Object.keys(DEFAULTS)) {
    if (!p.has(k)) continue;
    const v = p.get(k);
    if (BOOLEAN_KEYS.includes(k)) settings[k] = v === '1' || v === 'true';
    else if (WORD_KEYS.includes(k)) settings[k] = v;
    else if (SITE_KEYS.includes(k) && v === '') settings[k] = null;
    else if (v !== '' && Number.isFinite(Number(v))) settings[k] = Number(v);
  }
  settings.hosts = clampHosts(settings.hosts);
  return { scenario, settings };
}
