// Test helper: the real gateway — `wrangler dev` (the pinned wrangler 4.86.0, its workerd) on 127.0.0.1 with a
// free port, the Worker prebuilt by scripts/build-worker.sh, Durable Object state in a directory of the test's
// choosing. HOSTPACE_GATEWAY_DEBUG=1 prints wrangler's and the Worker's output when a gateway stops. Started in its own process group and stopped by signalling that group (wrangler starts workerd
// children); never by process name.

import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { TOL, freePort } from '../js/helpers.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));

/** wrangler.toml's `compatibility_date`, for the Workers these tests start under miniflare (which does not read it). */
export const COMPATIBILITY_DATE = readFileSync(`${root}wrangler.toml`, 'utf8').match(/^compatibility_date = "([^"]+)"/m)[1];

/**
 * A Worker's modules for miniflare, which loads only the modules it is given (it does not follow imports): `main`
 * first, then every `.js`/`.mjs` (an ES module) and `.wasm` (a compiled module) file under `dirs`. Paths are
 * relative to the repository; pass the result as `modules` with `modulesRoot: root`.
 * @param {string} main
 * @param {...string} dirs
 */
export function workerModules(main, ...dirs) {
  const under = dirs.flatMap((dir) => readdirSync(join(root, dir), { recursive: true }).map((f) => join(root, dir, f)));
  const paths = [join(root, main), ...under.filter((p) => /\.(m?js|wasm)$/.test(p) && p !== join(root, main))];
  return paths.map((path) => ({ type: path.endsWith('.wasm') ? 'CompiledWasm' : 'ESModule', path }));
}

/**
 * Slack for arrival checks at an origin behind the gateway (ms). The host's object confirms a departure and sends
 * it in one step; between that and the origin's stamp a request crosses workerd's outbound connection and the
 * test's event loop, which on a busy 2-core machine can delay one arrival by tens of milliseconds. The checks stay
 * sharp with it: `assertSpacing` and `audit` judge every span of arrivals, and a delay makes only its own arrival
 * late, so a burst (two at once) fails while this is under the interval, and a rate above the limit fails within
 * a few arrivals.
 */
export const GATEWAY_TOL = Math.max(TOL, 100);

/**
 * The environment wrangler runs in under the tests: the Worker prebuilt (tests build it once), no metrics, error
 * reports, banner (and with it the update check over the network) or colours, its config and logs in .wrangler/.
 */
export const WRANGLER_ENV = {
  ...process.env,
  HOSTPACE_WORKER_PREBUILT: '1',
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  XDG_CONFIG_HOME: `${root}.wrangler/config`,
  WRANGLER_LOG_PATH: `${root}.wrangler/logs`,
  NO_COLOR: '1',
};

const tempDirs = new Set();

/**
 * A fresh temporary directory for Durable Object state, removed when the process exits. In memory (/dev/shm) where
 * the machine has it: a host object's outgoing requests wait while its writes are stored (the runtime's output
 * gate), and on a busy disk storing one write can take hundreds of milliseconds. That is this machine's disk,
 * not the gateway and not Cloudflare's storage, so the timing checks keep it out.
 */
export function tempDir(prefix = 'hostpace-gateway-') {
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), prefix));
  if (tempDirs.size === 0) {
    process.once('exit', () => tempDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  }
  tempDirs.add(dir);
  return dir;
}

/**
 * wrangler.toml for tests, written to .wrangler/test-wrangler.toml: the same Worker, bindings, migrations, assets and
 * [vars], without the [build] section. Its file watcher reports a change shortly after start and reloads the
 * Worker, which would drop requests in flight (and the host objects' memory) at a random point of a test; the
 * tests build once instead (scripts/build-worker.sh).
 */
function testConfig() {
  const text = readFileSync(`${root}wrangler.toml`, 'utf8');
  const withoutBuild = text.replace(/^\[build\][\s\S]*?(?=^\[)/m, '');
  if (withoutBuild === text) throw new Error('wrangler.toml has no [build] section to drop');
  const relocated = withoutBuild
    .replace(/^main = "([^"]+)"/m, (_, p) => `main = "../${p}"`)
    .replace(/^directory = "([^"]+)"/m, (_, p) => `directory = "../${p}"`);
  mkdirSync(`${root}.wrangler`, { recursive: true });
  const path = `${root}.wrangler/test-wrangler.toml`;
  writeFileSync(path, relocated);
  return path;
}

/**
 * The gateway's Worker build under miniflare: workerd on 127.0.0.1 without wrangler's dev proxy in front (which
 * itself stalls under many concurrent large bodies), Durable Object state in a fresh temporary directory, the
 * decision log dropped (`logs`: an array the Worker's structured lines are pushed to instead, as `{ level,
 * message }`). `vars` override wrangler.toml's [vars] (which miniflare does not read); `otherTokens` are more
 * tenants' tokens (GATEWAY_TOKEN) besides `token`, `adminTokens` the operators' `label:token` entries
 * (GATEWAY_ADMIN_TOKEN). Returns `{ base, token, workerdPids, dispose }`; `workerdPids()` lists the workerd
 * processes it started. `script`: a module (under the repository) to run instead of worker/build/index.js, one
 * that wraps it.
 * @param {{ vars?: Record<string, string>, token?: string, otherTokens?: string[], adminTokens?: string[], script?: string, logs?: object[] }} options
 */
export async function startWorkerd({
  vars = {},
  token = 'test-token-7f3a9c',
  otherTokens = [],
  adminTokens = [],
  script = 'worker/build/index.js',
  logs,
} = {}) {
  const { Miniflare, convertV4MiniflareOptions } = await import('miniflare');
  const tomlVars = readFileSync(`${root}wrangler.toml`, 'utf8').split(/^\[vars\]$/m)[1] ?? '';
  const bindings = {
    ...Object.fromEntries([...tomlVars.matchAll(/^(\w+)\s*=\s*"([^"]*)"/gm)].map((m) => [m[1], m[2]])),
    GATEWAY_TOKEN: [token, ...otherTokens].join(','),
    ...(adminTokens.length > 0 ? { GATEWAY_ADMIN_TOKEN: adminTokens.join(',') } : {}),
    ...vars,
  };
  const mf = new Miniflare(convertV4MiniflareOptions({
    modules: workerModules(script, 'worker/build'),
    modulesRoot: root,
    compatibilityDate: COMPATIBILITY_DATE,
    host: '127.0.0.1',
    port: 0,
    durableObjects: {
      HOSTS: { className: 'HostObject', useSQLite: true },
      LEDGER: { className: 'TokenLedger', useSQLite: true },
      RULES: { className: 'RulesObject', useSQLite: true },
    },
    resourcePersistencePath: tempDir('hostpace-workerd-'),
    bindings,
    handleStructuredLogs: logs ? (line) => logs.push(line) : () => {},
  }));
  const base = (await mf.ready).href.replace(/\/$/, '');
  const workerdPids = async () => {
    const { stdout } = await promisify(execFile)('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)]);
    return stdout.split('\n').filter((l) => l.includes('workerd')).map((l) => Number(l.trim().split(/\s+/)[0]));
  };
  return { base, token, workerdPids, dispose: () => mf.dispose() };
}

/** Starts tried before giving up when another process takes a picked port first (see `Gateway.start`). */
const PORT_TRIES = 5;

export class Gateway {
  /**
   * Start the gateway. `vars` override wrangler.toml's [vars] (strings); `persistTo` keeps Durable Object state
   * (default: a fresh temporary directory). Started means wrangler says it is ready and `/healthz` answers 200,
   * or, with `healthy: false` (a configuration under test), answers at all. `otherTokens`: more tokens the gateway
   * accepts besides `token` (the one `request` sends); `adminTokens`: the operators' `label:token` entries
   * (GATEWAY_ADMIN_TOKEN).
   * @param {{ vars?: Record<string, string>, persistTo?: string, token?: string, otherTokens?: string[], adminTokens?: string[], healthy?: boolean }} options
   */
  static async start({
    vars = {},
    persistTo = tempDir(),
    token = 'test-token-7f3a9c',
    otherTokens = [],
    adminTokens = [],
    healthy = true,
  } = {}) {
    if (!existsSync(`${root}worker/build/index.js`)) {
      throw new Error('worker/build/index.js is missing: run scripts/build-worker.sh first');
    }
    const config = testConfig();
    // The ports are free when picked, but another process can bind one before wrangler does: wrangler then exits
    // with "Address already in use", and the start is tried again on fresh ports (a few times).
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const inspectorPort = await freePort();
      const args = [
        'dev',
        '--ip', '127.0.0.1',
        '--port', String(port),
        '--inspector-port', String(inspectorPort),
        '--config', config,
        '--persist-to', persistTo,
        '--show-interactive-dev-session=false',
        '--var', `GATEWAY_TOKEN:${[token, ...otherTokens].join(',')}`,
      ];
      if (adminTokens.length > 0) args.push('--var', `GATEWAY_ADMIN_TOKEN:${adminTokens.join(',')}`);
      for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`);
      const child = spawn(`${root}node_modules/.bin/wrangler`, args, {
        cwd: root,
        detached: true, // its own process group: stop() signals the group (wrangler and its workerd children)
        stdio: ['ignore', 'pipe', 'pipe'],
        env: WRANGLER_ENV,
      });
      const gateway = new Gateway(child, port, token, persistTo);
      const failure = await gateway.#ready(healthy);
      if (!failure) return gateway;
      await gateway.stop();
      if (!failure.addressInUse || attempt >= PORT_TRIES) {
        throw new Error(`the gateway did not start (try ${attempt} of at most ${PORT_TRIES}): ${failure.why}`);
      }
    }
  }

  constructor(child, port, token, persistTo) {
    this.child = child;
    this.port = port;
    this.token = token;
    this.persistTo = persistTo;
    this.base = `http://127.0.0.1:${port}`;
    /** wrangler's and the Worker's output, line by line (the last 5,000 lines). */
    this.output = [];
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    // whole lines: a chunk can end inside one (each stream keeps its unfinished line until the next chunk)
    const collector = () => {
      let partial = '';
      return (chunk) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop();
        for (const line of lines) if (line.trim()) this.output.push(line);
        if (this.output.length > 5000) this.output.splice(0, this.output.length - 5000);
      };
    };
    child.stdout.on('data', collector());
    child.stderr.on('data', collector());
  }

  /**
   * Wait until this gateway is up: wrangler has said it is ready on its own port (so an answer on that port is
   * its, not another process's that holds the port), and `/healthz` answers 200 (or at all, with `healthy`
   * false). Resolves `undefined` once it is, or `{ why, addressInUse }` when wrangler exits first or 90 s pass.
   */
  async #ready(healthy) {
    const deadline = Date.now() + 90_000;
    let exited = false;
    this.exited.then(() => (exited = true));
    const readyLine = `Ready on ${this.base}`;
    while (Date.now() < deadline && !exited) {
      if (this.output.some((line) => line.includes(readyLine))) {
        try {
          const res = await fetch(`${this.base}/healthz`, { signal: AbortSignal.timeout(2000) });
          await res.arrayBuffer();
          if (res.status === 200 || !healthy) return undefined;
        } catch (_) {
          // not listening yet
        }
      }
      await sleep(200);
    }
    const { code, signal } = exited ? await this.exited : {};
    return {
      addressInUse: exited && this.output.some((line) => /Address already in use/.test(line)),
      why: `${exited ? `wrangler exited (${code ?? signal})` : 'no answer within 90 s'}:\n${this.output.slice(-40).join('\n')}`,
    };
  }

  /** The structured decision lines the Worker logged. */
  decisions() {
    return this.output
      .map((line) => {
        const at = line.indexOf('{"attempt"');
        if (at < 0) return undefined;
        try {
          return JSON.parse(line.slice(at));
        } catch (_) {
          return undefined;
        }
      })
      .filter((d) => d && d.event === 'decision');
  }

  /** `fetch` against the gateway with its bearer token (unless `headers.authorization` is given as null). */
  request(path, init = {}) {
    const headers = { authorization: `Bearer ${this.token}`, ...(init.headers ?? {}) };
    if (headers.authorization === null) delete headers.authorization;
    return fetch(`${this.base}${path}`, { ...init, headers });
  }

  /** `GET /v1/fetch?url=` for `target`. */
  fetchVia(target, headers = {}) {
    return this.request(`/v1/fetch?url=${encodeURIComponent(target)}`, { headers });
  }

  /** POST JSON to a route. */
  post(path, body, headers = {}) {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  /** Stop wrangler and its workerd children (SIGTERM to the process group, SIGKILL after 5 s). */
  async stop() {
    if (process.env.HOSTPACE_GATEWAY_DEBUG) process.stderr.write(`${this.output.join('\n')}\n`);
    // once: after that the group's ID may be another's
    if (this.stopped) return;
    this.stopped = true;
    const signalGroup = (signal) => {
      try {
        process.kill(-this.child.pid, signal);
      } catch (_) {
        // already gone
      }
    };
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      // wrangler is gone (it exits by itself when it cannot start); workerd children it started may not be
      signalGroup('SIGKILL');
      return;
    }
    signalGroup('SIGTERM');
    const killed = await Promise.race([this.exited.then(() => true), sleep(5000).then(() => false)]);
    if (!killed) {
      signalGroup('SIGKILL');
      await this.exited;
    }
    // workerd children may outlive wrangler for a moment: make sure the group is gone
    await sleep(100);
    signalGroup('SIGKILL');
  }
}
