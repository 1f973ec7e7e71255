// The playground (www/) in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core), served by a
// static server over www/ on 127.0.0.1. Needs www/pkg: `npm run build:pkg` builds it.
//
// Tests read the page's state (`window.playground`: lanes, each lane's access log with the layer of every
// departure, audit violations, levels, settings), not pixels; the virtual clock is paused and advanced by the
// test, so every check is exact. Screenshots of each scenario go to target/playground-screenshots/ (ignored);
// the "discover 40 links" one is also copied to docs/playground.png for the README.
//
// Run: node --test tests/playground/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, copyFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { frameLine, launch, measureFrames } from './frames.mjs';
import { serveStatic } from './server.mjs';

const root = new URL('../../', import.meta.url).pathname;
const SHOTS = join(root, 'target', 'playground-screenshots');
const README_SHOT = join(root, 'docs', 'playground.png');
const EPS = 1e-6;

let server;
let browser;

before(async () => {
  await access(join(root, 'www', 'pkg', 'browser.js')).catch(() => {
    throw new Error('www/pkg is missing: run `npm run build:pkg` first');
  });
  await mkdir(SHOTS, { recursive: true });
  server = await serveStatic(join(root, 'www'));
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** The console error Chromium logs for the page's /healthz probe, which a static server answers 404: expected. */
const healthzNotFound = (m) => /^Failed to load resource: .*404/.test(m.text()) &&
  new URL(m.location().url || 'about:blank').pathname === '/healthz';

/** A fresh page on the playground (optionally with a hash); collects console errors, page errors and the paths
 * the page requested. */
async function open(hash = '', viewport = { width: 1280, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  const requested = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && !healthzNotFound(m)) errors.push(m.text()); });
  page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  await page.goto(`${server.base}/${hash}`);
  await page.waitForFunction(() => window.playground?.ready === true, null, { timeout: 20_000 });
  return { page, errors, requested };
}

/** Click a scenario button as a person would, pause the clock, and let `ms` of virtual time pass. */
async function runScenario(page, title, ms) {
  await page.getByRole('button', { name: title }).click();
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Restart' }).click(); // t=0 exactly, paused
  assert.equal(await page.evaluate(() => window.playground.nowMs), 0);
  return page.evaluate((ms) => window.playground.advance(ms), ms);
}

/** Set a labelled control as a person would (type, then leave the field). */
async function setControl(page, label, value) {
  const input = page.getByLabel(label, { exact: true });
  await input.fill(String(value));
  await input.press('Tab');
}

const lanes = (page) => page.evaluate(() => window.playground.lanes);
const gaps = (ds) => ds.slice(1).map((d, i) => d.atMs - ds[i].atMs);
const shot = (page, name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

test('loads with no console errors, the wasm module initialised, audit available', async () => {
  const { page, errors } = await open();
  try {
    const state = await page.evaluate(() => ({
      scenario: window.playground.scenario,
      audit: window.playground.auditAvailable,
      lanes: window.playground.lanes.map((l) => ({ kind: l.kind, levels: l.levels })),
      configError: window.playground.configError,
      ready: document.documentElement.dataset.ready,
    }));
    assert.equal(state.ready, 'true');
    assert.equal(state.configError, '');
    assert.equal(state.audit, true, 'the package exports audit');
    assert.deepEqual(state.lanes.map((l) => l.kind), ['token', 'leaky', 'layered']);
    // levels come from the module: the token bucket and the layered limiter report a full bucket of 40
    assert.equal(state.lanes[0].levels.capacity, 40);
    assert.equal(state.lanes[2].levels.capacity, 40);
    await page.waitForTimeout(300); // some frames of the loop run
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('from a static server Live is hidden: one /healthz probe, nothing else asked, the page as it was', async () => {
  const { page, errors, requested } = await open();
  try {
    await page.waitForFunction(() => window.playground.gatewayChecked === true, null, { timeout: 10_000 });
    const state = await page.evaluate(() => ({
      gateway: window.playground.gateway,
      mode: window.playground.mode,
      entered: window.playground.enterLive(), // refused: no gateway serves the page
      stats: window.playground.liveStats(),
      dataset: { ...document.documentElement.dataset },
      stored: Object.keys(sessionStorage).concat(Object.keys(localStorage)),
    }));
    assert.equal(state.gateway, null);
    assert.deepEqual([state.mode, state.entered], ['simulated', 'simulated']);
    assert.equal(state.dataset.gateway, 'no');
    assert.deepEqual([state.stats.requests, state.stats.polls, state.stats.polling], [1, 0, false]);
    assert.deepEqual(state.stored, []);
    assert.equal(await page.locator('#live-enter').isHidden(), true, 'no Live button');
    assert.equal(await page.locator('.f-live').isHidden(), true, 'no live fieldset');
    assert.equal(await page.locator('.f-limits').isVisible(), true, 'the simulated controls stay');
    assert.deepEqual((await lanes(page)).map((l) => l.kind), ['token', 'leaky', 'layered']);
    await page.waitForTimeout(2000);
    assert.deepEqual(requested.filter((p) => p === '/healthz'), ['/healthz'], 'asked once');
    assert.deepEqual(requested.filter((p) => p.startsWith('/v1/')), [], 'the gateway API is never asked');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('discover 40 links, capacity 40: token sends 40 at t=0, leaky one per interval, layered keeps the interval', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Discover 40 links', 0);
    await setControl(page, 'Burst capacity', 40);
    await page.evaluate(() => window.playground.advance(20_000)); // the whole log fits the 24 s timeline
    const state = await page.evaluate(() => ({ settings: window.playground.settings, lanes: window.playground.lanes }));
    assert.equal(state.settings.burstCapacity, 40);
    const interval = state.settings.minIntervalSec * 1000;
    assert.equal(interval, 500);
    const [token, leaky, layered] = state.lanes;
    assert.deepEqual([token.kind, leaky.kind, layered.kind], ['token', 'leaky', 'layered']);

    assert.equal(token.departures.length, 40);
    assert.ok(token.departures.every((d) => d.atMs === 0), 'the token bucket sends all 40 at t=0');

    assert.equal(leaky.departures.length, 40);
    leaky.departures.forEach((d, i) => assert.ok(Math.abs(d.atMs - i * interval) < EPS, `leaky #${i} at ${d.atMs}`));

    assert.equal(layered.departures.length, 40);
    assert.ok(gaps(layered.departures).every((g) => g >= interval - EPS), 'layered honours the interval');
    assert.deepEqual(layered.departures.slice(1).map((d) => d.layer), Array(39).fill('interval'));

    // the module's audit judges each access log against the configured limits
    assert.ok(token.violations.length > 0 && token.violations.every((v) => v.kind === 'interval' && v.atMs === 0));
    assert.deepEqual(leaky.violations, []);
    assert.deepEqual(layered.violations, []);
    assert.ok((await page.evaluate(() => window.playground.warnings)).some((w) => /burstCapacity 40/.test(w)));
    await shot(page, 'discover');
    await mkdir(join(root, 'docs'), { recursive: true });
    await copyFile(join(SHOTS, 'discover.png'), README_SHOT);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('429 with Retry-After N: nothing departs to that host until the cooldown ends; other hosts keep going', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Server answers 429 with Retry-After N', 30_000);
    const all = await lanes(page);
    const [busy, ...others] = all;
    assert.equal(busy.host, 'busy.example');
    assert.equal(busy.cooldowns.length, 1);
    const [start, end] = busy.cooldowns[0];
    assert.ok(start >= 3000 && end - start === 10_000, `cooldown ${start}..${end} (Retry-After: 10)`);
    assert.deepEqual(busy.departures.filter((d) => d.atMs > start && d.atMs < end), [], 'no departure in the cooldown');
    const resumed = busy.departures.find((d) => d.atMs >= end);
    assert.ok(resumed, 'the host resumes');
    assert.equal(resumed.atMs, end);
    assert.equal(resumed.layer, 'cooldown');
    for (const lane of others) {
      const during = lane.departures.filter((d) => d.atMs > start && d.atMs < end);
      assert.ok(during.length >= 15, `${lane.host} keeps going during the cooldown (${during.length} departures)`);
    }
    for (const lane of all) assert.deepEqual(lane.violations, [], `${lane.host} is polite`);
    await shot(page, 'retry429');

    // max backoff caps the cooldown (a control changes the decisions)
    await setControl(page, 'Max backoff (s)', 4);
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(30_000); });
    const capped = (await lanes(page))[0];
    const [s2, e2] = capped.cooldowns[0];
    assert.equal(e2 - s2, 4000);
    assert.deepEqual(capped.departures.filter((d) => d.atMs > s2 && d.atMs < e2), []);
    assert.ok(capped.departures.some((d) => d.atMs === e2));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('compare on the 429 input: the bare buckets ignore Retry-After and audit marks it; hostpace does not', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Server answers 429 with Retry-After N', 0);
    await page.getByRole('checkbox', { name: /Compare token vs leaky vs layered/ }).check();
    await page.evaluate(() => window.playground.advance(20_000));
    const [token, leaky, layered] = await lanes(page);
    assert.deepEqual([token.kind, leaky.kind, layered.kind], ['token', 'leaky', 'layered']);
    for (const lane of [token, leaky]) {
      const [start, end] = lane.cooldowns[0];
      const inside = lane.departures.filter((d) => d.atMs > start && d.atMs < end);
      assert.ok(inside.length > 0, `${lane.kind} departs inside the server's Retry-After`);
      const marked = lane.violations.filter((v) => v.kind === 'cooldown').map((v) => v.atMs);
      assert.deepEqual(marked, inside.map((d) => d.atMs), `${lane.kind}: audit marks exactly those departures`);
    }
    assert.deepEqual(layered.violations, []);
    await shot(page, 'compare-retry429');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('changing a control changes the next decisions', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Discover 40 links', 10_000);
    let layered = (await lanes(page))[2];
    assert.ok(gaps(layered.departures).every((g) => Math.abs(g - 500) < EPS));

    await setControl(page, 'Interval floor (s)', 1.25);
    await page.evaluate(() => window.playground.advance(10_000));
    const after = await lanes(page);
    layered = after[2];
    assert.equal(layered.departures.length, 9); // 0, 1.25, ..., 10 s
    assert.ok(gaps(layered.departures).every((g) => Math.abs(g - 1250) < EPS), 'the layered lane now keeps 1.25 s');
    assert.ok(gaps(after[1].departures).every((g) => Math.abs(g - 1250) < EPS), 'the leaky lane too');
    assert.match(await page.evaluate(() => location.hash), /minIntervalSec=1\.25/);
    const exported = await page.evaluate(() => window.playground.exports);
    assert.match(exported.js, /new Limiter\(\{[\s\S]*minIntervalSec: 1\.25,[\s\S]*\}\)/);
    assert.match(exported.vars, /CRAWL_MIN_INTERVAL_SEC = "1\.25"/);
    assert.equal(await page.locator('#export-js').inputValue(), exported.js);
    // the snippet runs against the package and builds the limiter the page uses
    const { Limiter } = await import(join(root, 'pkg', 'node.js'));
    const body = exported.js.replace(/^import .*$/m, '');
    const limiter = new Function('Limiter', `${body}\nreturn limiter;`)(Limiter);
    assert.equal(limiter.acquire('https://a.example/', 0).waitMs, 0);
    assert.equal(limiter.acquire('https://a.example/', 0).waitMs, 1250);

    // jitter: the layered lane's spacings stretch by up to a quarter, never shrink; the exports carry it
    await setControl(page, 'Jitter (share of a spacing, 0 to 1)', 0.25);
    await page.evaluate(() => window.playground.advance(20_000));
    const stretched = gaps((await lanes(page))[2].departures);
    assert.ok(stretched.length > 5 && stretched.every((g) => g > 1250 - EPS && g < 1562.5 + EPS), `${stretched}`);
    assert.ok(new Set(stretched.map(Math.round)).size > 1, `spread: ${stretched}`);
    const withJitter = await page.evaluate(() => window.playground.exports);
    assert.match(withJitter.js, /jitter: 0\.25,/);
    assert.match(withJitter.vars, /CRAWL_JITTER = "0\.25"/);
    await setControl(page, 'Jitter (share of a spacing, 0 to 1)', 0);

    // the rate: host2's steady pace under a backlog follows it
    await runScenario(page, 'Server answers 429 with Retry-After N', 0);
    await setControl(page, 'Rate (requests/s)', 4);
    await page.evaluate(() => window.playground.advance(10_000));
    const host2 = (await lanes(page))[1];
    assert.equal(host2.host, 'host2.example');
    const steady = gaps(host2.departures.filter((d) => d.atMs >= 2000));
    assert.ok(steady.length > 10 && steady.every((g) => Math.abs(g - 250) < EPS), `4/s: ${steady.slice(0, 5)}`);

    // concurrency: one permit, a slow server: departures wait for the response (layer concurrency)
    await setControl(page, 'Concurrency (permits, 0 = unlimited)', 1);
    await setControl(page, 'Server latency (ms)', 1000);
    await page.evaluate(() => window.playground.advance(10_000));
    const c = (await lanes(page))[1];
    assert.ok(gaps(c.departures).every((g) => g >= 1000 - EPS), 'one permit, 1 s latency: one departure per second');
    assert.ok(c.departures.slice(1).every((d) => d.layer === 'concurrency'));

    // quota: 5 per 10 s window
    await setControl(page, 'Concurrency (permits, 0 = unlimited)', 0);
    await setControl(page, 'Quota (requests, 0 = off)', 5);
    await setControl(page, 'Quota window (s)', 10);
    await page.evaluate(() => window.playground.advance(30_000));
    const q = await lanes(page);
    const h2 = q[1];
    for (const d of h2.departures) {
      const inWindow = h2.departures.filter((e) => e.atMs > d.atMs - 10_000 && e.atMs <= d.atMs).length;
      assert.ok(inWindow <= 5, `at most 5 in any 10 s window (${inWindow} up to ${d.atMs})`);
    }
    assert.ok(h2.departures.some((d) => d.layer === 'quota'));
    assert.equal(h2.levels.quotaLimit, 5);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('robots.txt Crawl-delay N raises that host floor only; a disallowed link is refused, never sent', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'robots.txt says Crawl-delay N', 0);
    await setControl(page, 'Crawl-delay N (s)', 3);
    await page.evaluate(() => window.playground.advance(30_000));
    const [slow, other] = await lanes(page);
    assert.equal(slow.robots.intervalMs, 3000);
    assert.ok(slow.departures.length >= 9);
    // every fourth link is under /private/, which the file disallows: refused by the module, not departed
    const considered = slow.departures.length + slow.refused.length;
    assert.ok(slow.refused.length >= 2, `${slow.refused.length} refused`);
    assert.equal(slow.refused.length, Math.floor(considered / 4), 'exactly the disallowed links');
    assert.deepEqual(other.refused, [], 'the other host has no robots.txt');
    assert.match(await page.locator('.lane').first().textContent(), new RegExp(`${slow.refused.length} refused by robots.txt`));
    assert.ok(gaps(slow.departures).every((g) => g >= 3000 - EPS), 'Crawl-delay 3 s kept');
    assert.ok(slow.departures.slice(1).every((d) => d.layer === 'interval'));
    assert.ok(other.departures.length > 3 * slow.departures.length, 'the other host keeps its pace');
    assert.deepEqual(slow.violations, []);
    await shot(page, 'crawl-delay');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('RateLimit remaining 0 holds the host until the reset', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'RateLimit remaining 0', 40_000);
    const [api, other] = await lanes(page);
    assert.ok(api.serverQuota.length >= 2, 'the server said remaining=0 more than once');
    for (const [s, e] of api.serverQuota) {
      assert.deepEqual(api.departures.filter((d) => d.atMs > s && d.atMs < e), [], `nothing in ${s}..${e}`);
    }
    assert.ok(api.departures.some((d) => d.layer === 'serverQuota'));
    assert.deepEqual(api.cooldowns, [], 'the server never had to answer 429');
    assert.ok(other.departures.length > api.departures.length);
    await shot(page, 'ratelimit-remaining-0');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a new host warms up: fast answers widen it, slow answers keep it narrow', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'New host warms up', 60_000);
    const s = await page.evaluate(() => window.playground.settings);
    assert.equal(s.adaptive, true);
    const [fast, slow] = await lanes(page);
    assert.equal(fast.levels.ratePerSec, s.ratePerSec, 'the fast host reached the configured rate');
    assert.equal(slow.levels.ratePerSec, s.minRatePerSec, 'the slow host narrowed to the floor');
    // the first departures of a new host are paced at the start rate (half the configured one, with that level's
    // burst), not the configured one: four, which the configured burst sends at once, take at least half a second
    assert.ok(fast.departures[3].atMs - fast.departures[0].atMs >= 1000 / (s.ratePerSec / 2));
    assert.ok(fast.departures.length > 2 * slow.departures.length);
    for (const l of [fast, slow]) assert.deepEqual(l.violations, []);
    await shot(page, 'warmup');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('speed: pause holds the virtual clock, 1x follows real time, 10x runs ten times faster, step goes to the next event', async () => {
  const { page, errors } = await open('#scenario=crawlDelay&n=3');
  try {
    const now = () => page.evaluate(() => window.playground.nowMs);
    const realMs = () => page.evaluate(() => performance.now());
    const rate = async (label) => {
      await page.getByRole('button', { name: label }).click();
      const [v0, r0] = [await now(), await realMs()];
      await page.waitForTimeout(1000);
      const [v1, r1] = [await now(), await realMs()];
      return (v1 - v0) / (r1 - r0);
    };
    const one = await rate('1×');
    assert.ok(one > 0.8 && one < 1.2, `1x: ${one.toFixed(2)} virtual ms per real ms`);
    const ten = await rate('10×');
    assert.ok(ten > 8 && ten < 12, `10x: ${ten.toFixed(2)} virtual ms per real ms`);
    assert.ok((await rate('Pause')) === 0);
    // step: paused on the crawl-delayed host, the next event is a response or the next departure the module allows
    await page.getByRole('button', { name: 'Restart' }).click();
    const times = [];
    for (let i = 0; i < 6; i++) {
      await page.getByRole('button', { name: 'Step' }).click();
      times.push(await now());
    }
    assert.ok(times.every((t, i) => i === 0 || t > times[i - 1]), `each step moves the clock: ${times}`);
    const slow = (await lanes(page))[0];
    assert.ok(slow.departures.every((d) => d.atMs <= times.at(-1)));
    assert.ok(slow.departures.length >= 1);
    assert.equal(await page.getByRole('button', { name: 'Pause' }).getAttribute('aria-pressed'), 'true');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('settings travel in the URL hash; exports name the wrangler vars', async () => {
  const { page, errors } = await open('#scenario=crawlDelay&n=5&ratePerSec=3&hosts=4');
  try {
    const state = await page.evaluate(() => ({ s: window.playground.settings, scenario: window.playground.scenario }));
    assert.equal(state.scenario, 'crawlDelay');
    assert.equal(state.s.n, 5);
    assert.equal(state.s.ratePerSec, 3);
    assert.equal(await page.getByLabel('Rate (requests/s)', { exact: true }).inputValue(), '3');
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(20_000); });
    const all = await lanes(page);
    assert.equal(all.length, 4);
    assert.equal(all[0].robots.intervalMs, 5000);
    const { vars, js } = await page.evaluate(() => window.playground.exports);
    // the names the gateway reads (worker/src/config.rs), as strings
    for (const line of ['CRAWL_RATE_PER_SEC = "3.0"', 'CRAWL_BURST_CAPACITY = "4.0"', 'CRAWL_MIN_INTERVAL_SEC = "0.0"',
      'CRAWL_MAX_CONCURRENCY = "0"', 'CRAWL_QUOTA_LIMIT = "0"', 'CRAWL_QUOTA_WINDOW_SEC = "60.0"',
      'CRAWL_MAX_BACKOFF_SEC = "120.0"', 'CRAWL_MAX_RETRIES = "3"']) {
      assert.ok(vars.split('\n').includes(line), `${line} in ${vars}`);
    }
    assert.match(js, /ratePerSec: 3,/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('keyboard reachable, every control labelled, readable at a phone width', async () => {
  const { page, errors } = await open('', { width: 390, height: 844 });
  try {
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, textarea, select')]
      .filter((el) => el.labels.length === 0 && !el.getAttribute('aria-label')).map((el) => el.name || el.id));
    assert.deepEqual(unlabelled, []);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 390 px (${overflow} px too wide)`);
    // Tab reaches the scenario buttons; Enter presses one
    let reached = false;
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.dataset?.scenario === 'retry429');
    }
    assert.ok(reached, 'Tab reaches the 429 scenario');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => window.playground.scenario), 'retry429');
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(15_000); });
    await shot(page, 'phone-retry429');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('an invalid setting is reported, not thrown', async () => {
  const { page, errors } = await open();
  try {
    await setControl(page, 'Burst capacity', 0);
    const state = await page.evaluate(() => ({ e: window.playground.configError, n: window.playground.lanes.length }));
    assert.match(state.e, /burstCapacity/);
    assert.equal(state.n, 0);
    assert.match(await page.locator('#config-error').textContent(), /burstCapacity/);
    await setControl(page, 'Burst capacity', 4);
    assert.equal(await page.evaluate(() => window.playground.lanes.length), 3);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a long run keeps a bounded access log per lane and stays polite', async () => {
  const { page, errors } = await open('#scenario=retry429&ratePerSec=10&burstCapacity=10');
  try {
    await page.evaluate(() => { window.playground.pause(); window.playground.restart(); window.playground.advance(1_300_000); });
    const all = await lanes(page);
    for (const lane of all) {
      assert.ok(lane.dropped > 0, `${lane.host} dropped its oldest departures (${lane.dropped})`);
      assert.ok(lane.departures.length <= 10_000);
      assert.deepEqual(lane.violations, []);
    }
    // host2 ran at 10/s all along: 13,000 departures in 1,300 s, of which the newest are kept
    assert.ok(Math.abs(all[1].dropped + all[1].departures.length - 13_000) <= 10);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

/** What each lane's levels show in the page: the vessel's level and owed part, the slot, seat and text readouts. */
const shown = (page) => page.evaluate(() => [...document.querySelectorAll('.lane')].map((lane) => ({
  level: parseFloat(lane.querySelector('.level').style.height) / 100,
  owedRem: parseFloat(lane.querySelector('.owed').style.height) || 0,
  slotBar: parseFloat(lane.querySelector('.slot-fill').style.width) / 100,
  slotsTaken: lane.querySelectorAll('.slots i.taken').length,
  seatsTaken: lane.querySelectorAll('.seats i.taken').length,
  seats: lane.querySelectorAll('.seats i').length,
  text: [...lane.querySelectorAll('.levels > div:not([hidden])')].map((d) => d.textContent.trim()).join(' | '),
})));

test('each layer is drawn as the module reports it: vessel, owed tokens, reserved slots, seats; no negative number', async () => {
  const { page, errors } = await open();
  try {
    const scenarios = [
      ['Discover 40 links', [0, 250, 1000, 7000]],
      ['Server answers 429 with Retry-After N', [2000, 3300, 8000, 16_000]],
      ['robots.txt says Crawl-delay N', [1000, 5000]],
      ['RateLimit remaining 0', [2000, 4000, 12_000]],
      ['New host warms up', [1000, 9000]],
    ];
    let owedSeen = false;
    for (const [title, times] of scenarios) {
      await runScenario(page, title, 0);
      let at = 0;
      for (const t of times) {
        await page.evaluate((ms) => window.playground.advance(ms), t - at);
        at = t;
        const [state, view] = [await lanes(page), await shown(page)];
        assert.equal(view.length, state.length);
        state.forEach((lane, i) => {
          const lv = lane.levels;
          const where = `${title} at ${t} ms, ${lane.host} (${lane.kind})`;
          if (lv.tokens !== undefined) {
            // the vessel's level is the module's tokens over capacity, read in the same frame
            assert.ok(lv.tokens >= 0 && lv.tokenDebt >= 0, `${where}: tokens ${lv.tokens}, debt ${lv.tokenDebt}`);
            assert.ok(Math.abs(view[i].level - Math.min(1, lv.tokens / lv.capacity)) < 0.001, `${where}: level ${view[i].level}`);
            assert.ok(Math.abs(view[i].owedRem - Math.min(1, lv.tokenDebt / lv.capacity) * 0.6) < 0.001, `${where}: owed`);
            owedSeen ||= lv.tokenDebt > 0 && view[i].owedRem > 0;
          }
          if (lv.nextSlotInMs !== undefined) assert.equal(view[i].slotBar > 0, lv.nextSlotInMs > 0, `${where}: next slot bar`);
          const ahead = lane.departures.filter((d) => d.atMs > t).length;
          assert.equal(lv.reservedAhead, ahead, `${where}: reserved ahead`);
          assert.equal(view[i].slotsTaken, Math.min(8, ahead), `${where}: slots drawn`);
          if (lv.inFlight !== undefined) assert.equal(view[i].seatsTaken, Math.min(view[i].seats, lv.inFlight), `${where}: seats`);
          assert.doesNotMatch(view[i].text, /-\s*\d|\d\.\d{3,}/, `${where}: numbers shown as they mean: ${view[i].text}`);
        });
      }
      await shot(page, `levels-${title.replace(/\W+/g, '-').toLowerCase()}`);
    }
    assert.ok(owedSeen, 'a debt was shown below the rim at least once (discover: 40 links reserved at t=0)');

    // permits as seats: two of two taken while two requests are in flight
    await runScenario(page, 'Discover 40 links', 0);
    await page.evaluate(() => window.playground.set({ maxConcurrency: 2, compare: false, latencyMs: 2000 }));
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(600); });
    const [lane] = await lanes(page);
    const [view] = await shown(page);
    assert.equal(lane.levels.inFlight, 2);
    assert.deepEqual([view.seats, view.seatsTaken], [2, 2]);
    assert.match(view.text, /2 of 2 taken/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('server answers that changed pacing are marked where they came: 429, RateLimit, robots.txt', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Server answers 429 with Retry-After N', 20_000);
    const busy = (await lanes(page))[0];
    // the 429 answered the first request that left at or after 3 s, one latency later
    const asked = busy.departures.find((d) => d.atMs >= 3000);
    const settings = await page.evaluate(() => window.playground.settings);
    assert.deepEqual(busy.answers, [{ atMs: asked.atMs + settings.latencyMs, status: 429, text: '429 Retry-After: 10' }]);
    assert.equal(busy.answers[0].atMs, busy.cooldowns[0][0], 'the mark sits where the cooldown starts');

    await runScenario(page, 'RateLimit remaining 0', 12_000);
    const api = (await lanes(page))[0];
    assert.ok(api.serverQuota.length >= 1);
    assert.deepEqual(api.answers.map((a) => a.atMs), api.serverQuota.map((s) => s[0]), 'one mark per block, at its start');
    for (const a of api.answers) assert.match(a.text, /^200 RateLimit: limit=6, remaining=0, reset=\d+$/);

    await runScenario(page, 'robots.txt says Crawl-delay N', 1000);
    const slow = (await lanes(page))[0];
    assert.deepEqual(slow.answers, [{ atMs: 0, status: 200, text: 'robots.txt: Crawl-delay: 3, Disallow: /private/' }]);
    assert.deepEqual((await lanes(page))[1].answers, [], 'the other host heard nothing that changed its pace');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('time you can move in: at 10x the whole run stays reachable, the overview jumps, paused the pointer explains', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Server answers 429 with Retry-After N', 0);
    await page.getByRole('button', { name: '10×' }).click();
    await page.waitForFunction(() => window.playground.nowMs >= 60_000, null, { timeout: 30_000 });
    await page.getByRole('button', { name: 'Pause' }).click();
    const view = () => page.evaluate(() => window.playground.view);
    const visible = async () => (await page.evaluate(() => window.playground.visible))[0];
    const busy = (await lanes(page))[0];
    const first = busy.departures[0];
    let v = await view();
    assert.equal(v.following, true);
    assert.ok(v.startMs > first.atMs, 'at the present the start of the run is out of view');
    // back with "Earlier" until the start is in view: the first departure is still there
    for (let k = 0; k < 20 && v.startMs > 0; k++) {
      await page.getByRole('button', { name: 'Earlier' }).click();
      v = await view();
    }
    assert.deepEqual([v.startMs, v.following], [0, false]);
    assert.deepEqual((await visible())[0], first, 'the first departure is reachable');
    // zoomed out, the whole run is in one view
    await page.getByRole('button', { name: 'Zoom out' }).click();
    await page.getByRole('button', { name: 'Zoom out' }).click();
    v = await view();
    assert.ok(v.spanMs >= 60_000 && v.startMs === 0, `span ${v.spanMs}`);
    assert.equal((await visible()).length, busy.departures.length);
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await page.getByRole('button', { name: 'Zoom in' }).click();
    assert.equal((await view()).spanMs, 24_000);
    // "Follow present" comes back to the present; a click at the overview's left edge goes to the start
    await page.getByRole('button', { name: 'Follow present' }).click();
    assert.equal((await view()).following, true);
    const strip = await page.locator('#overview').boundingBox();
    await page.mouse.click(strip.x + 2, strip.y + strip.height / 2);
    v = await view();
    assert.deepEqual([v.startMs, v.following], [0, false]);
    // paused, the pointer over the departure that waited out the cooldown says when, how long and why
    const resumed = busy.departures.find((d) => d.layer === 'cooldown');
    const canvas = await page.locator('.lane canvas').first().boundingBox();
    const px = canvas.x + 6 + ((resumed.atMs - v.startMs) / v.spanMs) * (canvas.width - 12);
    await page.mouse.move(px, canvas.y + canvas.height - 20);
    const text = await page.locator('#pointer').textContent();
    const n = busy.departures.indexOf(busy.departures.find((d) => d.atMs === resumed.atMs)) + 1;
    const sec = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
    assert.equal(text, `busy.example: departure ${n} at ${sec(resumed.atMs)}, waited ${sec(resumed.waitMs)}, set by the cooldown`);
    assert.ok(resumed.waitMs >= 9000, `it waited out the cooldown: ${resumed.waitMs} ms`);
    await shot(page, 'timeline-history');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('the chart under each timeline follows the token level; the knob and the compared lanes say what they mean', async () => {
  const { page, errors } = await open();
  try {
    const chart = () => page.evaluate(() => window.playground.chart);
    const text = (sel) => page.evaluate((sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent), sel);
    await runScenario(page, 'Discover 40 links', 7000);
    const [token, leaky, layered] = await lanes(page);
    const [tokenChart, leakyChart, layeredChart] = await chart();
    // the token bucket sends its 40 at t=0: the chart falls from full to empty there, then refills
    assert.deepEqual(tokenChart.slice(0, 2), [[0, 40, 0], [0, 40, 0]]);
    assert.deepEqual(tokenChart.find((p) => p[1] === 0), [0, 0, 0]);
    assert.deepEqual(leakyChart, [], 'a bare leaky bucket has no tokens');
    for (const [lane, points] of [[token, tokenChart], [layered, layeredChart]]) {
      assert.deepEqual(points.at(-1), [7000, lane.levels.tokens, lane.levels.tokenDebt], `${lane.kind}: the chart ends at now`);
      for (let i = 1; i < points.length; i++) assert.ok(points[i][0] >= points[i - 1][0], 'in time order');
      assert.ok(points.every((p) => p[1] >= 0 && p[2] >= 0));
    }
    // compare mode: one line per lane says what its access log shows
    assert.deepEqual(await text('.lane .differs'), [
      'Access log: at most 40 in one second · the closest two 0 s apart',
      'Access log: at most 2 in one second · the closest two 0.50 s apart',
      'Access log: at most 2 in one second · the closest two 0.50 s apart',
    ]);
    // N is hidden where it plays no part, and named for what it is elsewhere
    assert.equal(await page.locator('#n-knob').isHidden(), true);
    await runScenario(page, 'Server answers 429 with Retry-After N', 1000);
    assert.equal(await page.getByLabel('Retry-After N (s)', { exact: true }).inputValue(), '10');
    assert.deepEqual(await text('.lane .differs'), ['', '', ''], 'the line is for compare mode');
    assert.match((await text('.lane .summary'))[0], /^\d+ sent · links keep coming · 0 audit violations$/);
    await runScenario(page, 'RateLimit remaining 0', 0);
    assert.equal(await page.getByLabel('Server window N (s)', { exact: true }).isVisible(), true);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

/** The departures of `hosts`' lanes together, in time order, each with its host. */
const together = (all, hosts) => all.filter((l) => hosts.includes(l.host))
  .flatMap((l) => l.departures.map((d) => ({ ...d, host: l.host })))
  .sort((a, b) => a.atMs - b.atMs);
const SITE_HOSTS = ['www.example.com', 'img.example.com', 'example.com'];

test('grouped by site: the hosts of one site take turns at its pace; hosts of other sites are not slowed', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Hosts of one site', 30_000);
    assert.equal(await page.getByLabel('Group by', { exact: true }).inputValue(), 'site');
    const s = await page.evaluate(() => window.playground.settings);
    assert.deepEqual([s.ratePerSec, s.burstCapacity, s.siteRatePerSec, s.siteBurstCapacity], [1, 1, 2, 1]);
    // the board: one site lane with its three hosts, a site of one host, and an IP address (no site) alone
    assert.deepEqual(await page.evaluate(() => window.playground.groups), [
      { site: '*.example.com', hosts: SITE_HOSTS },
      { site: '*.example.org', hosts: ['other.example.org'] },
      { site: null, hosts: ['192.0.2.7'] },
    ]);
    const dom = await page.evaluate(() => ({
      sites: [...document.querySelectorAll('#lanes > .site')].map((el) => ({
        site: el.querySelector('.site-head .host').textContent,
        hosts: [...el.querySelectorAll('.site-hosts > .lane .host')].map((h) => h.textContent),
      })),
      alone: [...document.querySelectorAll('#lanes > .lane .host')].map((h) => h.textContent),
      lanes: [...document.querySelectorAll('.lane .host')].map((h) => h.textContent),
    }));
    assert.deepEqual(dom.sites, [
      { site: '*.example.com', hosts: SITE_HOSTS }, { site: '*.example.org', hosts: ['other.example.org'] },
    ]);
    assert.deepEqual(dom.alone, ['192.0.2.7']);

    const all = await lanes(page);
    assert.deepEqual(all.map((l) => [l.host, l.site]), [
      ...SITE_HOSTS.map((h) => [h, '*.example.com']), ['other.example.org', '*.example.org'], ['192.0.2.7', null],
    ]);
    assert.deepEqual(dom.lanes, all.map((l) => l.host), 'the host lanes on the page, in the order of the state');
    // the three hosts' arrivals together are the site's: exactly one per 500 ms (site rate 2/s, burst 1), from t=0
    const site = together(all, SITE_HOSTS);
    assert.equal(site.length, 61);
    site.forEach((d, i) => assert.equal(d.atMs, i * 500, `the site's departure #${i} (${d.host})`));
    assert.ok(site.slice(1).every((d) => d.layer === 'site'), 'every wait after the first was the site\'s');
    // they take turns: each host every 1.5 s, within its own limit (1/s)
    for (const host of SITE_HOSTS) {
      const own = all.find((l) => l.host === host).departures;
      assert.ok(Math.abs(own.length - 61 / 3) <= 1, `${host}: ${own.length} departures`);
      assert.ok(gaps(own).every((g) => g === 1500), `${host} every 1.5 s: ${gaps(own)}`);
    }
    // the site lane holds the same log, audited against the site's limits, and the site's own levels
    const [exampleCom, exampleOrg] = await page.evaluate(() => window.playground.sites);
    assert.deepEqual([exampleCom.site, exampleCom.hosts], ['*.example.com', SITE_HOSTS]);
    assert.deepEqual(exampleCom.departures, site);
    assert.deepEqual(exampleCom.violations, []);
    assert.deepEqual([exampleCom.levels.ratePerSec, exampleCom.levels.capacity], [2, 1]);
    assert.equal(exampleCom.levels.host, '*.example.com');
    assert.deepEqual([exampleOrg.site, exampleOrg.hosts], ['*.example.org', ['other.example.org']]);
    // the hosts of the other sites (and the host without one) go at their own pace, one per second from t=0
    for (const host of ['other.example.org', '192.0.2.7']) {
      const own = all.find((l) => l.host === host);
      assert.deepEqual(own.departures.map((d) => d.atMs), Array.from({ length: 31 }, (_, i) => i * 1000), host);
      assert.ok(own.departures.every((d) => d.layer !== 'site'), `${host} never waited for a site`);
    }
    for (const lane of all) assert.deepEqual(lane.violations, [], `${lane.host} is polite`);
    assert.match(await page.locator('.site .site-head .differs').first().textContent(), /the closest two 0\.50 s apart/);
    await shot(page, 'sites');

    // paused, the pointer over the site's timeline names the host a departure went to
    await page.getByRole('button', { name: 'Earlier' }).click();
    const v = await page.evaluate(() => window.playground.view);
    const second = site.find((d) => d.atMs >= v.startMs + 2000);
    const box = await page.locator('.site-head canvas.timeline').first().boundingBox();
    await page.mouse.move(box.x + 6 + ((second.atMs - v.startMs) / v.spanMs) * (box.width - 12), box.y + box.height - 20);
    assert.match(await page.locator('#pointer').textContent(),
      new RegExp(`^\\*\\.example\\.com: departure ${site.indexOf(second) + 1} to ${second.host.replace(/\./g, '\\.')} at .* set by the site$`));

    // the site's interval floor: 0.75 s between any two of its hosts' departures, the others unchanged
    await setControl(page, 'Site interval floor (s)', 0.75);
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(30_000); });
    let now = await lanes(page);
    const floored = together(now, SITE_HOSTS);
    assert.equal(floored.length, 41);
    floored.forEach((d, i) => assert.equal(d.atMs, i * 750, `with the floor, #${i}`));
    assert.deepEqual(now.find((l) => l.host === 'other.example.org').departures.map((d) => d.atMs).slice(0, 4), [0, 1000, 2000, 3000]);

    // a site's quota: at most 5 of its hosts' departures in any 10 s
    await setControl(page, 'Site interval floor (s)', '');
    await setControl(page, 'Site quota (requests)', 5);
    await setControl(page, 'Site quota window (s)', 10);
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(40_000); });
    now = await lanes(page);
    const quota = together(now, SITE_HOSTS);
    for (const d of quota) {
      const inWindow = quota.filter((e) => e.atMs > d.atMs - 10_000 && e.atMs <= d.atMs).length;
      assert.ok(inWindow <= 5, `at most 5 in any 10 s window of the site (${inWindow} up to ${d.atMs})`);
    }
    assert.equal(quota.length, 20, '5 per window, 4 windows');
    const sites = await page.evaluate(() => window.playground.sites);
    assert.deepEqual([sites[0].levels.quotaLimit, sites[0].levels.quotaWindowSec], [5, 10]);
    assert.deepEqual(sites.map((x) => x.violations), [[], []]);

    // grouped by host again: five lanes alone, each at its own pace, no site anywhere
    await page.getByLabel('Group by', { exact: true }).selectOption('host');
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(10_000); });
    const byHost = await page.evaluate(() => ({ groups: window.playground.groups, sites: window.playground.sites, lanes: window.playground.lanes }));
    assert.deepEqual(byHost.groups.map((g) => g.site), [null, null, null, null, null]);
    assert.deepEqual(byHost.sites, []);
    assert.equal(await page.locator('.site').count(), 0);
    for (const lane of byHost.lanes) {
      assert.equal(lane.site, null);
      assert.deepEqual(lane.departures.map((d) => d.atMs), Array.from({ length: 11 }, (_, i) => i * 1000), lane.host);
    }
    assert.equal(await page.getByLabel('Site rate (requests/s)', { exact: true }).isDisabled(), true);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('exports carry the grouping and the site knobs that are set, and none of it grouped by host', async () => {
  const { page, errors } = await open();
  try {
    await runScenario(page, 'Hosts of one site', 0);
    const exported = () => page.evaluate(() => window.playground.exports);
    const siteVars = (vars) => vars.split('\n').filter((l) => /^CRAWL_(GROUP_BY|SITE_)/.test(l));
    let { js, vars } = await exported();
    assert.match(js, /\n {2}groupBy: 'site',\n {2}siteLimits: \{ ratePerSec: 2, burstCapacity: 1 \},\n/);
    assert.deepEqual(siteVars(vars), ['CRAWL_GROUP_BY = "site"', 'CRAWL_SITE_RATE_PER_SEC = "2.0"', 'CRAWL_SITE_BURST_CAPACITY = "1.0"']);

    await setControl(page, 'Site interval floor (s)', 0.75);
    await setControl(page, 'Site max in flight (0: no limit)', 3);
    await setControl(page, 'Site quota (requests)', 50);
    await setControl(page, 'Site quota window (s)', 60);
    ({ js, vars } = await exported());
    assert.match(js, /siteLimits: \{ ratePerSec: 2, burstCapacity: 1, minIntervalSec: 0\.75, maxConcurrency: 3, quota: \{ limit: 50, windowSec: 60 \} \},/);
    assert.deepEqual(siteVars(vars), [
      'CRAWL_GROUP_BY = "site"', 'CRAWL_SITE_RATE_PER_SEC = "2.0"', 'CRAWL_SITE_BURST_CAPACITY = "1.0"',
      'CRAWL_SITE_MIN_INTERVAL_SEC = "0.75"', 'CRAWL_SITE_MAX_CONCURRENCY = "3"', 'CRAWL_SITE_QUOTA_LIMIT = "50"',
      'CRAWL_SITE_QUOTA_WINDOW_SEC = "60.0"',
    ]);
    assert.equal(await page.locator('#export-vars').inputValue(), vars);
    // the snippet runs against the package and paces the hosts of one site as one
    const { Limiter } = await import(join(root, 'pkg', 'node.js'));
    const limiter = new Function('Limiter', `${js.replace(/^import .*$/m, '')}\nreturn limiter;`)(Limiter);
    const waits = [...SITE_HOSTS, 'other.example.org'].map((h) => limiter.acquire(`https://${h}/`, 0));
    assert.deepEqual(waits.map((d) => [d.waitMs, d.layer]), [[0, 'none'], [750, 'site'], [1500, 'site'], [0, 'none']]);
    assert.equal(limiter.stats('www.example.com', 0).site, '*.example.com');
    limiter.free();

    // an emptied knob is the config's again: gone from both exports; the settings travel in the URL
    await setControl(page, 'Site quota window (s)', '');
    await setControl(page, 'Site burst capacity', '');
    await setControl(page, 'Site max in flight (0: no limit)', '');
    ({ js, vars } = await exported());
    assert.match(js, /siteLimits: \{ ratePerSec: 2, minIntervalSec: 0\.75, quota: \{ limit: 50, windowSec: 60 \} \},/,
      'the site quota takes the config\'s window');
    assert.deepEqual(siteVars(vars), [
      'CRAWL_GROUP_BY = "site"', 'CRAWL_SITE_RATE_PER_SEC = "2.0"', 'CRAWL_SITE_MIN_INTERVAL_SEC = "0.75"',
      'CRAWL_SITE_QUOTA_LIMIT = "50"',
    ]);
    const hash = await page.evaluate(() => location.hash);
    assert.match(hash, /groupBy=site/);
    assert.match(hash, /siteMinIntervalSec=0\.75/);
    assert.match(hash, /siteBurstCapacity=(&|$)/);
    const again = await open(hash);
    try {
      const s = await again.page.evaluate(() => window.playground.settings);
      assert.deepEqual([s.groupBy, s.siteRatePerSec, s.siteBurstCapacity, s.siteMinIntervalSec, s.siteQuotaLimit, s.siteQuotaWindowSec],
        ['site', 2, null, 0.75, 50, null]);
      assert.equal(await again.page.getByLabel('Site burst capacity', { exact: true }).inputValue(), '');
      assert.equal(await again.page.getByLabel('Site burst capacity', { exact: true }).getAttribute('placeholder'), '1');
      assert.deepEqual(await again.page.evaluate(() => window.playground.exports), { js, vars });
      assert.deepEqual(again.errors, []);
    } finally {
      await again.page.close();
    }

    // grouped by host: nothing of it in the exports, the site's knobs kept but not used
    await page.getByLabel('Group by', { exact: true }).selectOption('host');
    ({ js, vars } = await exported());
    assert.doesNotMatch(js, /groupBy|siteLimits/);
    assert.deepEqual(siteVars(vars), []);
    assert.equal((await page.evaluate(() => window.playground.settings)).siteMinIntervalSec, 0.75);
    assert.equal(await page.getByLabel('Site interval floor (s)', { exact: true }).isDisabled(), true);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a bad site knob is reported, not thrown; the site lanes fit a phone', async () => {
  const { page, errors } = await open('#scenario=sites', { width: 390, height: 844 });
  try {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scrolling at 390 px (${overflow} px too wide)`);
    await page.evaluate(() => { window.playground.pause(); window.playground.advance(10_000); });
    await shot(page, 'phone-sites');
    for (const [label, value, field] of [
      ['Site burst capacity', 0, /siteLimits\.burstCapacity/],
      ['Site rate (requests/s)', -1, /siteLimits\.ratePerSec/],
      ['Site quota (requests)', 0, /siteLimits\.quota\.limit/],
      ['Site interval floor (s)', -2, /siteLimits\.minIntervalSec/],
    ]) {
      const before = await page.getByLabel(label, { exact: true }).inputValue();
      await setControl(page, label, value);
      const state = await page.evaluate(() => ({
        e: window.playground.configError, n: window.playground.lanes.length, sites: window.playground.sites.length,
      }));
      assert.match(state.e, field, label);
      assert.deepEqual([state.n, state.sites], [0, 0], `${label}: no lanes`);
      assert.match(await page.locator('#config-error').textContent(), field);
      assert.match(await page.locator('#lanes .error').textContent(), field);
      await setControl(page, label, before);
      assert.equal(await page.evaluate(() => window.playground.configError), '');
      assert.deepEqual(await page.evaluate(() => window.playground.groups.map((g) => g.hosts.length)), [3, 1, 1]);
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('rendering: 20 hosts at 10x keep the frame budget (performance.now in the page)', async () => {
  const { page, errors } = await open('#scenario=retry429&hosts=20');
  try {
    await page.getByRole('button', { name: '10×' }).click();
    const stats = { ...(await measureFrames(page)), t: await page.evaluate(() => window.playground.nowMs) };
    const line = frameLine('playground 20 hosts 10x', stats);
    console.log(line);
    test.diagnostic?.(line);
    assert.equal(stats.lanes, 20);
    assert.ok(stats.t > 40_000, `the virtual clock ran at 10x (${stats.t} ms)`);
    assert.ok(stats.frames >= 200, `at least 200 frames in 5 s (${stats.frames})`);
    assert.ok(stats.workMs.p95 < 16.7, `p95 page work per frame ${stats.workMs.p95.toFixed(2)} ms < 16.7 ms`);
    assert.ok(stats.frameIntervalMs.median < 16.7 + 2, `median frame interval ${stats.frameIntervalMs.median.toFixed(2)} ms`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
