// Servers a test starts (nginx, redis-server) are stopped by their PID when the test's process leaves, however it
// leaves: at its exit, or at a signal whose default action would skip the exit event.

/** Run `cleanUp` when this process exits, or before a SIGINT, SIGTERM or SIGHUP acts as it would have. */
export function atExit(cleanUp) {
  process.on('exit', cleanUp);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      cleanUp();
      process.kill(process.pid, sig);
    });
  }
}
