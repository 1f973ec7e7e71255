// A real nginx as the target: `startNginx()` runs Debian's /usr/sbin/nginx on 127.0.0.1 with `limit_req` on its
// pages, in a temporary prefix of its own, and reads nginx's own access log (the target's view, timed by nginx).
// Used by tests/js/nginx.test.mjs and bench/nginx.mjs; scripts/setup.sh installs nginx.
//
// The server: one process (`daemon off; master_process off;`) in a process group of its own, stopped by its PID
// (the group's), never by name. Pages /p/0.html … /p/{pages-1}.html are limited per client address
// (`limit_req_zone $binary_remote_addr … rate=R r/s`); a rejected request is answered 429 with `Retry-After: 1`.
// /robots.txt is served outside the limit, so that only pages are judged. The access log holds one line per
// request as it finishes: `$msec $status $request_uri` ($msec: epoch seconds with millisecond resolution), just
// after the response's last byte was written: `await server.sync()` before reading it after a crawl.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './helpers.mjs';
import { atExit } from '../support/at-exit.mjs';

/** The nginx binary: Debian's, unless NGINX names another. */
export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';

const READY_PATH = '/__ready';
// logged but neither limited nor returned by log(): a request to it marks how far the log is complete (see sync)
const SYNC_PATH = '/__sync';

// every nginx started and not yet stopped (PID → its prefix), so that leaving the process stops them and removes
// their prefixes too
const running = new Map();
let hooked = false;
function killAll() {
  for (const [pid, prefix] of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(prefix, { recursive: true, force: true });
  }
  running.clear();
}
function hookExit() {
  if (hooked) return;
  hooked = true;
  atExit(killAll);
}

/** GET path on 127.0.0.1:port over a connection of its own; resolves to the status, or 0 when it fails. */
function probe(port, path, timeoutMs = 500) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

function config({ prefix, port, ratePerSec, burst, nodelay }) {
  const limit = `limit_req zone=site${burst > 0 ? ` burst=${burst}` : ''}${burst > 0 && nodelay ? ' nodelay' : ''};`;
  const tmp = (name) => `${name}_temp_path ${join(prefix, 'tmp', name)};`;
  return `# written by tests/js/nginx.mjs
daemon off;
master_process off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'error.log')} warn;

events {
  worker_connections 256;
}

http {
  default_type text/html;
  ${tmp('client_body')}
  ${tmp('proxy')}
  ${tmp('fastcgi')}
  ${tmp('uwsgi')}
  ${tmp('scgi')}

  log_format judge '$msec $status $request_uri';
  access_log ${join(prefix, 'access.log')} judge;

  limit_req_zone $binary_remote_addr zone=site:1m rate=${ratePerSec}r/s;
  limit_req_status 429;
  # every rejection is in the access log; the error log keeps nginx's own problems only
  limit_req_log_level info;

  # Retry-After on the rejections only (an empty value adds no header)
  map $status $retry_after {
    429 1;
    default '';
  }

  server {
    listen 127.0.0.1:${port};
    root ${join(prefix, 'html')};
    keepalive_timeout 75s;
    keepalive_requests 10000;

    location / {
      ${limit}
      add_header Retry-After $retry_after always;
    }
    # outside the limit: only pages are judged
    location = /robots.txt {
    }
    # the readiness probe: neither limited nor logged
    location = ${READY_PATH} {
      access_log off;
      return 204;
    }
    # the log's completion mark (see sync() in nginx.mjs): logged, not limited
    location = ${SYNC_PATH} {
      return 204;
    }
  }
}
`;
}

/** One access-log line (`$msec $status $request_uri`) as `{ atMs, status, path }`. */
function parseLine(line) {
  const [msec, status, path] = line.split(' ');
  return { atMs: Math.round(Number(msec) * 1000), status: Number(status), path };
}

/**
 * Start nginx on a free port of 127.0.0.1, limiting its pages to `ratePerSec` per client address with `burst`
 * (omitted when 0; `nodelay` only matters with a burst: without it nginx delays the excess instead of answering
 * it at once). Resolves once it answers.
 * @returns {Promise<{ port: number, host: string, prefix: string, pid: number, url(path?: string): string,
 *   warm(connections?: number): Promise<void>, sync(): Promise<void>,
 *   log(): { atMs: number, status: number, path: string }[], stop(): Promise<void> }>}
 */
export async function startNginx({ ratePerSec = 2, burst = 0, nodelay = false, pages = 40 } = {}) {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} not found: run scripts/setup.sh (it installs Debian's nginx)`);
  const prefix = mkdtempSync(join(os.tmpdir(), 'hostpace-nginx-'));
  try {
    mkdirSync(join(prefix, 'html', 'p'), { recursive: true });
    mkdirSync(join(prefix, 'tmp'));
    for (let i = 0; i < pages; i++) {
      writeFileSync(join(prefix, 'html', 'p', `${i}.html`), `<!doctype html><title>page ${i}</title><p>page ${i}</p>\n`);
    }
    writeFileSync(join(prefix, 'html', 'robots.txt'), 'User-agent: *\nAllow: /\n');
    // a few tries: the free port can be taken by someone else before nginx binds it
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const started = await launch(prefix, port, { ratePerSec, burst, nodelay });
      if (started.ok) return server(prefix, port, started.child);
      if (!started.addressInUse || attempt >= 5) throw new Error(`nginx did not start: ${started.why}`);
    }
  } catch (e) {
    rmSync(prefix, { recursive: true, force: true });
    throw e;
  }
}

// Run nginx with a config for `port` and wait (at most 10 s) until it answers or exits.
async function launch(prefix, port, limits) {
  const conf = join(prefix, 'nginx.conf');
  rmSync(join(prefix, 'error.log'), { force: true }); // a failed try's complaints are not this one's
  writeFileSync(conf, config({ prefix, port, ...limits }));
  const stderrPath = join(prefix, 'stderr.log');
  const stderr = openSync(stderrPath, 'w');
  let child;
  try {
    // -e: the error log before the config is read (else nginx opens the package's /var/log/nginx/error.log)
    child = spawn(NGINX, ['-p', `${prefix}/`, '-c', conf, '-e', join(prefix, 'error.log')], {
      detached: true,
      stdio: ['ignore', stderr, stderr],
    });
  } finally {
    closeSync(stderr);
  }
  hookExit();
  running.set(child.pid, prefix);
  // nothing keeps this process alive for nginx's sake: leaving it stops nginx (see hookExit)
  child.unref();
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
    running.delete(child.pid);
  });
  const spawnError = once(child, 'error').then(([e]) => e);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (exited) break;
    const status = await Promise.race([probe(port, READY_PATH), spawnError.then(() => -1)]);
    if (status === -1) return { ok: false, why: (await spawnError).message };
    if (status === 204) return { ok: true, child };
    await sleep(20);
  }
  if (!exited) await stop(child);
  const why = ['stderr.log', 'error.log']
    .map((f) => join(prefix, f))
    .filter(existsSync)
    .map((f) => readFileSync(f, 'utf8').trim())
    .filter(Boolean)
    .join('\n');
  return {
    ok: false,
    addressInUse: /Address already in use/.test(why),
    why: `${exited ? `exited (${exited.code ?? exited.signal})` : 'no answer within 10 s'}${why ? `: ${why}` : ''}`,
  };
}

// Stop nginx by its PID (SIGTERM to its process group, SIGKILL after 5 s) and wait for it to be gone.
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }, 5000);
  await gone;
  clearTimeout(timer);
  running.delete(child.pid);
}

function server(prefix, port, child) {
  const host = `127.0.0.1:${port}`;
  const accessLog = join(prefix, 'access.log');
  const readLog = () =>
    existsSync(accessLog)
      ? readFileSync(accessLog, 'utf8')
          .split('\n')
          .filter((l) => l.trim())
          .map(parseLine)
      : [];
  let stopped = false;
  let marks = 0;
  return {
    port,
    host,
    prefix,
    /** The nginx process's PID (its process group's too). */
    pid: child.pid,
    /** An absolute URL on this server. */
    url: (path = '/') => `http://${host}${path}`,
    /**
     * Open `connections` keep-alive connections from this process's `fetch` (and load undici, whose first use
     * blocks the event loop for tens of milliseconds) with the readiness probe, which is neither limited nor
     * logged: a crawl started next is measured without a cold start.
     */
    async warm(connections = 1) {
      await Promise.all(
        Array.from({ length: connections }, () => fetch(`http://${host}${READY_PATH}`).then((r) => r.arrayBuffer())),
      );
    },
    /**
     * The access log so far, in the order nginx wrote it: `{ atMs, status, path }` (atMs: epoch ms), without
     * sync()'s marks. nginx writes a line just after the response's last byte, so a response already read can
     * still be missing here: `await sync()` first.
     */
    log() {
      return readLog().filter((e) => !e.path.startsWith(SYNC_PATH));
    },
    /**
     * Resolves once every request answered so far is in the log (at most 5 s): a mark request on a connection of
     * its own is handled after nginx finished logging every response already sent, so its line comes after theirs.
     */
    async sync() {
      const mark = `${SYNC_PATH}?${++marks}`;
      const status = await probe(port, mark, 2000);
      if (status !== 204) throw new Error(`nginx on ${host} did not answer the log mark (${status || 'no answer'})`);
      const deadline = Date.now() + 5000;
      while (!readLog().some((e) => e.path === mark)) {
        if (Date.now() > deadline) throw new Error(`nginx on ${host} did not log ${mark} within 5 s`);
        await sleep(5);
      }
    },
    /** Stop nginx (by PID) and remove its prefix; the log is read before, if it is wanted. */
    async stop() {
      if (stopped) return;
      stopped = true;
      await stop(child);
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

/**
 * What a crawl of `pages` did, from a server's access log: requests to pages, 429s, pages answered 200 (at least
 * once), and the rate of pages: (pages − 1) ÷ the time from the first to the last page-request line (nginx's
 * $msec), so that a crawl at exactly R pages a second measures R.
 */
export function judge(log, pages) {
  const pageLines = log.filter((e) => e.path.startsWith('/p/'));
  const ok = new Map();
  for (const e of pageLines) if (e.status === 200) ok.set(e.path, (ok.get(e.path) ?? 0) + 1);
  const rejected = pageLines.filter((e) => e.status === 429).length;
  const firstMs = pageLines.length ? Math.min(...pageLines.map((e) => e.atMs)) : NaN;
  const lastMs = pageLines.length ? Math.max(...pageLines.map((e) => e.atMs)) : NaN;
  const seconds = (lastMs - firstMs) / 1000;
  const fetched = ok.size;
  return {
    requests: pageLines.length,
    rejected,
    rejectedShare: pageLines.length ? rejected / pageLines.length : 0,
    otherStatuses: pageLines.filter((e) => e.status !== 200 && e.status !== 429).length,
    pagesFetched: fetched,
    pagesMissing: pages - fetched,
    pagesFetchedTwice: [...ok.values()].filter((n) => n > 1).length,
    seconds,
    pagesPerSec: fetched > 1 && seconds > 0 ? (fetched - 1) / seconds : NaN,
  };
}

/**
 * Crawl `urls` with `callers` concurrent callers pulling from one shared queue, each URL once through
 * `limiter.fetch(url, { timeoutMs, signal })`, reading the body. A final answer other than 2xx counts as given
 * up; a call that rejects (a timeout, the signal) as failed, by error name. Once `signal` aborts, no caller takes
 * another URL. Resolves to `{ ok, gaveUp, failed: { [name]: count }, statuses: { [status]: count }, wallMs }`.
 */
export async function crawl(limiter, urls, { callers = 8, timeoutMs = 60_000, signal } = {}) {
  const queue = [...urls];
  const out = { ok: 0, gaveUp: 0, failed: {}, statuses: {}, wallMs: 0 };
  const t0 = performance.now();
  const caller = async () => {
    for (let url; !signal?.aborted && (url = queue.shift()) !== undefined; ) {
      try {
        const res = await limiter.fetch(url, { timeoutMs, signal });
        await res.arrayBuffer();
        out.statuses[res.status] = (out.statuses[res.status] ?? 0) + 1;
        if (res.ok) out.ok++;
        else out.gaveUp++;
      } catch (e) {
        const name = e?.name ?? 'Error';
        out.failed[name] = (out.failed[name] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  out.wallMs = performance.now() - t0;
  return out;
}
