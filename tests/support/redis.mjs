// A real Redis as the store of tests: `startRedis()` runs Debian's /usr/bin/redis-server (scripts/setup.sh installs
// it) on 127.0.0.1, in the foreground, with no persistence (`--save '' --appendonly no`) and a folder of its own
// under the system's temporary folder. Used by tests/js/redis-store.test.mjs.
//
// The server is one process, stopped by its PID (SIGTERM, then SIGKILL after 5 s), never by name; leaving this
// process stops every server still running and removes their folders. `restart()` starts a stopped server again on
// the same port (with no data: nothing was persisted), which is how a test takes the store down and back up.
// `startRedisCluster()` makes a Redis Cluster of such servers with Debian's redis-cli.

import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../js/helpers.mjs';
import { promisify } from 'node:util';
import { atExit } from './at-exit.mjs';

/** The redis-server binary: Debian's, unless REDIS_SERVER names another. */
export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

// every server running (PID → its ChildProcess) and every folder made, so that leaving the process stops and
// removes them
const running = new Map();
const folders = new Set();
let hooked = false;
function cleanUp() {
  for (const pid of running.keys()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}
function hookExit() {
  if (hooked) return;
  hooked = true;
  atExit(cleanUp);
}


/** Send PING (inline) to 127.0.0.1:port on a connection of its own; resolves true when it answers +PONG. */
function ping(port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk;
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

/** Run redis-server on `port` with its files in `dir`; resolves once it answers PING, or with why it did not. */
async function launch(dir, port, extra) {
  const logFile = join(dir, 'redis.log');
  rmSync(logFile, { force: true }); // a failed try's complaints are not this one's
  const child = spawn(
    REDIS_SERVER,
    [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--dir', dir,
      '--logfile', logFile,
      '--daemonize', 'no',
      '--databases', '1',
      ...extra,
    ],
    { stdio: 'ignore' },
  );
  hookExit();
  running.set(child.pid, child);
  // nothing keeps this process alive for the server's sake: leaving it stops the server (see hookExit)
  child.unref();
  let exited = null;
  child.once('exit', (code, signal) => {
    exited = { code, signal };
    running.delete(child.pid);
  });
  const spawnError = once(child, 'error').then(([e]) => e);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !exited) {
    const answered = await Promise.race([ping(port), spawnError.then(() => null)]);
    if (answered === null) return { ok: false, why: (await spawnError).message };
    if (answered) return { ok: true, child };
    await sleep(20);
  }
  if (!exited) await stop(child);
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').trim() : '';
  const how = exited ? `exited (${exited.code ?? exited.signal})` : 'no answer to PING within 10 s';
  return { ok: false, addressInUse: /Address already in use/.test(log), why: log ? `${how}: ${log}` : how };
}

/** Stop a server by its PID (SIGTERM, SIGKILL after 5 s) and wait until it has exited. */
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  try {
    process.kill(child.pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const timer = setTimeout(() => {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }, 5000);
  await gone;
  clearTimeout(timer);
  running.delete(child.pid);
}

/**
 * Start redis-server on 127.0.0.1: on `port` when given, else on a free port (another one is tried, up to 5 in
 * all, when the one picked turns out to be taken before the server binds it). Resolves once it answers PING.
 * `args`: more arguments for redis-server (`['--cluster-enabled', 'yes']`).
 * @returns {Promise<{ port: number, url: string, pid: number, dir: string, stop(): Promise<void>,
 *   restart(): Promise<void> }>} `pid` is the running process's (a restart changes it); `stop()` ends it and waits
 *   for its exit; `restart()` starts it again on the same port, with no data.
 */
export async function startRedis({ port, args = [] } = {}) {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(`${REDIS_SERVER} not found: run scripts/setup.sh (it installs Debian's redis-server)`);
  }
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new RangeError(`startRedis: port must be a TCP port number (1-65535), got ${port}`);
  }
  const dir = mkdtempSync(join(os.tmpdir(), 'hostpace-redis-'));
  folders.add(dir);
  hookExit();
  let child;
  let chosen;
  for (let attempt = 1; ; attempt++) {
    chosen = port ?? (await freePort());
    const started = await launch(dir, chosen, args);
    if (started.ok) {
      child = started.child;
      break;
    }
    if (port !== undefined || !started.addressInUse || attempt >= 5) {
      rmSync(dir, { recursive: true, force: true });
      folders.delete(dir);
      throw new Error(`redis-server did not start on 127.0.0.1:${chosen}: ${started.why}`);
    }
  }
  const server = {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    pid: child.pid,
    dir,
    /** Stop the server (by its PID) and wait for its exit; nothing happens when it is not running. */
    async stop() {
      await stop(child);
    },
    /** Start the server again on the same port; an error when it is running, or when it does not start. */
    async restart() {
      if (child.exitCode === null && child.signalCode === null) {
        throw new Error(`redis-server on port ${chosen} is running (PID ${child.pid}): stop() it first`);
      }
      const started = await launch(dir, chosen, args);
      if (!started.ok) throw new Error(`redis-server did not start again on 127.0.0.1:${chosen}: ${started.why}`);
      child = started.child;
      server.pid = child.pid;
    },
  };
  return server;
}

/** Debian's redis-cli (installed with redis-server), which makes a cluster of servers. */
export const REDIS_CLI = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';

/**
 * A Redis Cluster of `masters` servers (no replicas) on 127.0.0.1, each started by `startRedis` with cluster mode
 * on, the slots shared out by `redis-cli --cluster create`. Resolves once every node says `cluster_state:ok`.
 * @returns {Promise<{ nodes: Array<{ host: string, port: number }>, stop(): Promise<void> }>}
 */
export async function startRedisCluster({ masters = 3 } = {}) {
  if (!existsSync(REDIS_CLI)) throw new Error(`${REDIS_CLI} not found: run scripts/setup.sh (redis-server brings it)`);
  const servers = [];
  const stopAll = () => Promise.all(servers.map((s) => s.stop()));
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(await startRedis({ args: ['--cluster-enabled', 'yes', '--cluster-node-timeout', '5000'] }));
    }
    const run = promisify(execFile);
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await run(REDIS_CLI, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    const deadline = Date.now() + 15_000;
    for (const s of servers) {
      for (;;) {
        const { stdout } = await run(REDIS_CLI, ['-h', '127.0.0.1', '-p', String(s.port), 'CLUSTER', 'INFO'], {
          timeout: 5000,
        });
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster node 127.0.0.1:${s.port} not ok within 15 s:\n${stdout}`);
        await sleep(50);
      }
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  return { nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })), stop: stopAll };
}
