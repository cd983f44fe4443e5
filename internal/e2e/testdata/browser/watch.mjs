// The order watch in a browser (TestWatchInBrowser). An EventSource cannot
// send an Authorization header and the edge takes no token from a cookie or
// the URL, so the page first shows that EventSource is refused, then reads
// the same text/event-stream with fetch() and parses the SSE frames itself.
export default async function (ctx) {
  const page = ctx.page;
  const { token } = ctx.params;
  await page.goto(ctx.url + '/health'); // the edge's own origin: no CORS involved
  const { id } = await ctx.ask('place', {});
  const watch = `/api/orders/${id}:watch`;

  const eventSource = await page.evaluate((u) => new Promise((resolve) => {
    const s = new EventSource(u);
    const t = setTimeout(() => { s.close(); resolve('timeout'); }, 15000);
    s.onmessage = () => { clearTimeout(t); s.close(); resolve('message'); };
    s.onerror = () => {
      if (s.readyState === EventSource.CLOSED) { clearTimeout(t); resolve('closed'); }
    };
  }), watch);

  await page.evaluate(({ u, tok }) => {
    document.body.innerHTML = '<h1>GET ' + u + ' (fetch, text/event-stream)</h1><pre id="log"></pre>';
    const log = document.getElementById('log');
    window.__events = [];
    window.__done = (async () => {
      const res = await fetch(u, {
        headers: { Authorization: 'Bearer ' + tok, Accept: 'text/event-stream' },
        signal: AbortSignal.timeout(90000),
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (let n = 0; n < 100000; n++) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length === 0) continue; // a keep-alive comment
          window.__events.push({ event, data: data.join('\n') });
          log.textContent += 'event: ' + event + '\ndata: ' + data.join('\n') + '\n\n';
        }
      }
      return { status: res.status, type: res.headers.get('content-type'), rest: buf };
    })();
  }, { u: watch, tok: token });

  await page.waitForFunction(() => window.__events.length >= 1, null, { timeout: 30000 });
  await ctx.shot('accepted');
  await ctx.ask('restore-inventory', {});
  const res = await page.evaluate(() => window.__done);
  await ctx.shot('confirmed');
  const events = await page.evaluate(() => window.__events);
  return { eventSource, ...res, events };
}
