// Shared by the playground's frame-time checks (tests) and bench/playground.mjs: Chromium's launch options, the
// page's own frame figures over a stretch of time, and the page opened in Live mode on a gateway with a token.
import { chromium } from 'playwright-core';

/** Debian's Chromium, headless, with nothing that reaches the network on its own. */
export const LAUNCH = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
};

/** A headless Chromium. */
export const launch = () => chromium.launch(LAUNCH);

/**
 * The page's frame figures (`window.playground.frameStats()`: page work per frame and frame interval, each
 * `{ samples, median, p95, max }`) over `ms` of real time after `warmMs`, with the lanes shown then.
 */
export async function measureFrames(page, ms = 5000, warmMs = 500) {
  await page.waitForTimeout(warmMs);
  await page.evaluate(() => window.playground.resetFrameStats());
  await page.waitForTimeout(ms);
  return page.evaluate(() => ({ ...window.playground.frameStats(), lanes: window.playground.lanes.length }));
}

/** One line of frame figures, for a log. */
export function frameLine(what, s) {
  const f = (p) => `median ${p.median.toFixed(2)} ms, p95 ${p.p95.toFixed(2)} ms, max ${p.max.toFixed(2)} ms`;
  return `${what}: ${s.frames} frames; page work per frame ${f(s.workMs)}; frame interval ${f(s.frameIntervalMs)}`;
}

/**
 * A page of `browser` on the playground a gateway serves at `base`, in Live mode with `token` entered as a person
 * enters it (the Live button, the token field); resolves once the page has `lanes` lanes.
 */
export async function openLive(browser, base, token, lanes = 1, viewport = { width: 1280, height: 1000 }) {
  const page = await browser.newPage({ viewport });
  await page.goto(`${base}/`);
  await page.waitForFunction(() => window.playground?.gatewayChecked === true, null, { timeout: 20_000 });
  await page.getByRole('button', { name: 'Live gateway' }).click();
  await page.getByLabel('Gateway token').fill(token);
  await page.getByRole('button', { name: 'Use this token' }).click();
  await page.waitForFunction((n) => window.playground.lanes.length >= n, lanes, { timeout: 30_000 });
  return page;
}
