import { DurableObject } from 'cloudflare:workers';
export class Obj extends DurableObject {
  async fetch(req) {
    if (new URL(req.url).pathname === '/write') this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v TEXT)'), this.ctx.storage.sql.exec('INSERT OR REPLACE INTO t VALUES (1, ?)', String(Date.now()));
    return new Response('ok');
  }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const p = u.pathname;
    if (p === '/plain') return new Response('ok');
    if (p === '/fetch') return fetch(u.searchParams.get('url'));
    if (p === '/write-fetch') {
      // the least a gateway with a persisted per-host decision does: one object call that writes, then the fetch
      await env.O.get(env.O.idFromName('x')).fetch('http://do/write');
      return fetch(u.searchParams.get('url'));
    }
    const stub = env.O.get(env.O.idFromName('x'));
    return stub.fetch('http://do' + p);
  },
};
