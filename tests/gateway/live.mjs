// Shared by the live-mode test and bench/playground.mjs: a crawl that keeps a gateway busy with many hosts.

/**
 * Fetch through `gateway` (a `Gateway` of gateway.mjs) with `token`, one request at a time per origin of `hosts`
 * (`/page/1`, `/page/2`, …), all hosts side by side, for `ms`; resolves to the number of answers.
 */
export async function crawlMany(gateway, token, hosts, ms) {
  const end = Date.now() + ms;
  let answers = 0;
  await Promise.all(hosts.map(async (o) => {
    for (let i = 1; Date.now() < end; i++) {
      const res = await gateway.fetchVia(o.url(`/page/${i}`), { authorization: `Bearer ${token}` });
      await res.arrayBuffer();
      answers += 1;
    }
  }));
  return answers;
}
