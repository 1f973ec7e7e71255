// Numbers and times as a person reads them.

/** At most `digits` decimals, no trailing zeros (2.200000080180004 → "2.2"). */
export const num = (x, digits = 1) => String(Number(x.toFixed(digits)));

/** Milliseconds as seconds: "0 s", "2.35 s", "12.5 s"; "—" for none. */
export const sec = (ms) => (ms === undefined ? '—' : ms === 0 ? '0 s' : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`);

/** An instant of the gateway's clock as a time of day (HH:MM:SS, with milliseconds when `withMs`). */
export function clockTime(ms, withMs = false) {
  if (!Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  const hms = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  return withMs ? `${hms}.${String(d.getMilliseconds()).padStart(3, '0')}` : hms;
}

const LAYER_NAMES = {
  none: 'nothing (went at once)', burst: 'the token bucket', interval: 'the interval', quota: 'the quota',
  cooldown: 'the cooldown', concurrency: 'concurrency', serverQuota: 'the server quota', site: 'the site',
};

/** What a layer (as the module names it) is called in a sentence; a name it does not know, as it is. */
export const layerName = (layer) => LAYER_NAMES[layer] ?? layer;
