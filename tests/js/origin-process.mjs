// An origin in a process of its own (`RemoteOrigin` in helpers.mjs): started with its routes as JSON in argv[2],
// it tells its parent its port, then every request it logs, over IPC; 'sync' is answered once every entry before
// it has been sent. It closes and ends when told to ('close') or when its parent goes away.
import { Origin } from './helpers.mjs';

const origin = await Origin.start(JSON.parse(process.argv[2] ?? '{}'));
origin.onLog = (entry) => process.send({ entry });
process.on('message', (m) => {
  if (m === 'sync') process.send({ synced: true });
  if (m === 'close') process.disconnect();
});
process.on('disconnect', async () => {
  await origin.close();
  process.exit(0);
});
process.send({ port: origin.port });
