// The order watch in a browser (TestWatchInBrowser). An EventSource cannot
// send an Authorization header, so the page first shows that a bare
// EventSource is refused (401 closes it), then asks POST /api/stream-tickets
// (with the bearer token) for a ticket bound to the watch's path and opens
// a real EventSource on the ticket's url: it receives every state, then
// `event: end`, and the page closes it (EventSource would reconnect, and
// the ticket is single-use).
export default async function (ctx) {
  const page = ctx.page;
  const { token } = ctx.params;
  await page.goto(ctx.url + '/health'); // the edge's own origin: no CORS involved
  const { id } = await ctx.ask('place', {});
  const watch = `/api/orders/${id}:watch`;

  const bare = await page.evaluate((u) => new Promise((resolve) => {
    const s = new EventSource(u);
    const t = setTimeout(() => { s.close(); resolve('timeout'); }, 15000);
    s.onmessage = () => { clearTimeout(t); s.close(); resolve('message'); };
    s.onerror = () => {
      if (s.readyState === EventSource.CLOSED) { clearTimeout(t); resolve('closed'); }
    };
  }), watch);

  const ticket = await page.evaluate(async ({ u, tok }) => {
    const res = await fetch('/api/stream-tickets', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + tok, 'Content-Type': 'application/json' },
      body: JSON.stringify({ path: u }),
    });
    return { status: res.status, ...(await res.json()) };
  }, { u: watch, tok: token });

  await page.evaluate((url) => {
    document.body.innerHTML = '<h1>new EventSource(' + url.replace(/ticket=.*/, 'ticket=…') + ')</h1><pre id="log"></pre>';
    const log = document.getElementById('log');
    window.__events = [];
    window.__done = new Promise((resolve) => {
      const s = new EventSource(url);
      const t = setTimeout(() => { s.close(); resolve('timeout'); }, 90000);
      const seen = (event) => (e) => {
        window.__events.push({ event, data: e.data });
        log.textContent += 'event: ' + event + '\ndata: ' + e.data + '\n\n';
        if (event !== 'message') { clearTimeout(t); s.close(); resolve(event); }
      };
      s.onmessage = seen('message');
      s.addEventListener('end', seen('end'));
      s.addEventListener('error', (e) => {
        if (e.data !== undefined) { seen('error')(e); return; } // the edge's terminal problem
        if (s.readyState === EventSource.CLOSED) { clearTimeout(t); resolve('closed'); }
      });
    });
  }, ticket.url);

  await page.waitForFunction(() => window.__events.length >= 1, null, { timeout: 30000 });
  await ctx.shot('accepted');
  await ctx.ask('restore-inventory', {});
  const ended = await page.evaluate(() => window.__done);
  await ctx.shot('confirmed');
  const events = await page.evaluate(() => window.__events);
  const reused = await page.evaluate(async (url) => (await fetch(url)).status, ticket.url);
  return { bareEventSource: bare, ticketStatus: ticket.status, ended, reused, events };
}
