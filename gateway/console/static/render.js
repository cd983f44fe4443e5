// Rendering of the admin API's answers into the page. Every value goes
// in as text (textContent), never as markup.
import { sparkline } from './spark.js';

// TREND_MINUTES is the span of the trend lines: the console asks
// /admin/traffic for exactly this many minutes, and the labels say so.
export const TREND_MINUTES = 15;
const SPAN_SEC = TREND_MINUTES * 60;

// el makes an element with attributes and children (strings become text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

const badge = (text, kind) => el('span', { class: 'badge ' + kind, 'data-state': text }, text);
const stateKind = (s) => ({ UP: 'ok', SERVING: 'ok', closed: 'ok', READY: 'ok', DOWN: 'bad', open: 'bad', 'half-open': 'warn' }[s] || 'warn');
const num = (v, digits = 1) => (v === undefined || v === null ? '–' : Number(v).toFixed(digits));
const pct = (v) => (v ? (100 * v).toFixed(1) + '%' : '0%');
const ms = (sec) => (sec ? (1000 * sec).toFixed(1) + ' ms' : '–');
const when = (iso) => (iso && !iso.startsWith('0001') ? new Date(iso).toLocaleTimeString() : '');

function table(head, rows, attrs = {}) {
  return el('table', attrs,
    el('thead', {}, el('tr', {}, head.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows));
}

function offsetSeconds(offset) {
  return { '1h0m0s': 3600, '24h0m0s': 86400 }[offset] || 0;
}

// dur writes a Go duration of whole minutes or hours ("5m0s", "1h0m0s")
// as "5 min", "1 h"; anything else as it is.
export function dur(d) {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?0s$/.exec(d || '');
  if (!m) return d || '';
  const h = Number(m[1] || 0);
  const min = Number(m[2] || 0);
  if (h && !min) return h + ' h';
  return (h * 60 + min) + ' min';
}

// compared says what the grey line of a trend is: the same minutes of the
// clock, offset earlier (/admin/traffic's offset: 1 h once the edge has
// run an hour, 24 h once it has run a day, none before).
export function compared(offset) {
  const off = offsetSeconds(offset);
  if (off === 86400) return 'same minutes, previous day';
  if (off === 3600) return 'same minutes, previous hour';
  return 'none yet (the edge has run under an hour)';
}

function upstreamCard(u, t, offset, trips, win) {
  const chain = u.chain || { connectivity: '', inFlight: 0, breakers: [] };
  const s = (t && t.summary) || {};
  const recent = (t && t.recent) || [];
  const previous = (t && t.previous) || [];
  const off = offsetSeconds(offset);
  const ejections = u.instances.reduce((n, i) => n + (i.ejections || 0), 0);
  const head = el('div', { class: 'card-head' },
    el('h3', {}, u.name),
    el('span', { class: 'health' }, badge(u.health || 'UNKNOWN', stateKind(u.health))),
    el('span', { class: 'muted' }, chain.connectivity),
  );
  const stats = el('dl', { class: 'stats' },
    el('dt', {}, 'in flight'), el('dd', { class: 'inflight' }, chain.inFlight),
    el('dt', {}, 'ejections'), el('dd', { class: 'ejections' }, ejections),
    el('dt', {}, 'rate'), el('dd', { class: 'rate' }, num(s.rate, 2) + '/s'),
    el('dt', {}, '5xx'), el('dd', { class: 'errors' }, pct(s.errorRatio)),
    el('dt', {}, 'p99'), el('dd', { class: 'p99' }, ms(s.p99)),
  );
  const last = `last ${TREND_MINUTES} min`;
  const vs = off ? ` vs ${compared(offset)}` : '';
  const trends = el('div', {},
    el('div', { class: 'trends' },
      el('figure', {}, sparkline(recent, previous, 'rate', off, SPAN_SEC, `${u.name} request rate, ${last}${vs}`),
        el('figcaption', {}, `rate, ${last}`)),
      el('figure', {}, sparkline(recent, previous, 'errorRatio', off, SPAN_SEC, `${u.name} 5xx ratio, ${last}${vs}`),
        el('figcaption', {}, `5xx ratio, ${last}`))),
    el('p', { class: 'legend' }, `grey: ${compared(offset)}`),
  );
  const insts = table(['instance', 'health', 'ejected', 'failures', 'ejections', 'in flight'],
    u.instances.map((i) => el('tr', { 'data-instance': i.addr },
      el('td', {}, i.addr), el('td', { class: 'health' }, badge(i.health, stateKind(i.health))),
      el('td', {}, i.ejected ? 'until ' + when(i.ejectedUntil) : 'no'),
      el('td', {}, i.consecutiveFailures), el('td', {}, i.ejections), el('td', {}, i.inFlight ?? '–'))),
    { class: 'instances' });
  const breakers = table(['breaker', 'instance', 'state', `opened (last ${win})`, 'requests', 'failures', 'consecutive failures'],
    chain.breakers.map((b) => el('tr', { 'data-breaker': b.name, 'data-breaker-instance': b.instance || '' },
      el('td', {}, b.name), el('td', {}, b.instance || ''), el('td', { class: 'breaker-state' }, badge(b.state, stateKind(b.state))),
      el('td', { class: 'trips' }, num(trips[b.name] || 0, 0)),
      el('td', {}, b.counts.requests), el('td', {}, b.counts.totalFailures), el('td', {}, b.counts.consecutiveFailures))),
    { class: 'breakers' });
  return el('article', { class: 'card', 'data-upstream': u.name }, head, el('div', { class: 'row' }, stats, trends), insts, breakers);
}

export function renderUpstreams(root, ups, traffic) {
  const byName = Object.fromEntries(traffic.upstreams.map((t) => [t.name, t]));
  root.replaceChildren(...ups.upstreams.map((u) => upstreamCard(u, byName[u.name], traffic.offset, traffic.trips || {}, dur(traffic.window))));
}

const quota = (l) => (l ? `${l.rate} per ${l.period}, burst ${l.burst}` : 'none');

export function renderLimits(root, limits, traffic) {
  const out = [];
  const rl = limits.rateLimits;
  const limited = traffic.limited || {};
  if (!rl) {
    out.push(el('p', {}, 'No rate limits are configured.'));
  } else {
    const redis = rl.redis
      ? el('span', { class: 'redis' }, ' Redis ', badge(rl.redis.status, stateKind(rl.redis.status)), ` (outage policy ${rl.redis.outage}, timeout ${rl.redis.timeout})`)
      : null;
    out.push(el('p', { class: 'backend' }, 'Backend: ', el('strong', {}, rl.backend), redis));
    const rows = [];
    for (const [name, l] of Object.entries(rl.caller.plans)) rows.push(['caller', 'plan ' + name + (name === rl.caller.defaultPlan ? ' (default)' : ''), quota(l), 'caller']);
    for (const g of rl.groups) rows.push(['route group', g.name + ': ' + g.routes.join(', '), quota(g), g.name]);
    rows.push(['global', 'every caller', quota(rl.global), 'global']);
    rows.push(['failed auth', 'per client address', quota(rl.failedAuth), 'failed_auth']);
    rows.push(['ban', rl.bans.policy ? `over ${rl.bans.policy.threshold} refusals in ${rl.bans.policy.window}: ${rl.bans.policy.duration}` : 'none', '', 'ban']);
    out.push(el('h3', {}, 'Rate-limit layers'), el('p', { class: 'muted' }, 'refused: 429 answers within the last ' + dur(traffic.window)));
    out.push(table(['layer', 'applies to', 'quota', 'refused'],
      rows.map(([layer, what, q, key]) => el('tr', { 'data-layer': key }, el('td', {}, layer), el('td', {}, what), el('td', {}, q), el('td', { class: 'refused' }, num(limited[key] || 0, 0)))),
      { class: 'layers' }));
    out.push(el('h3', {}, bansHeading(rl)));
    if (rl.bans.error) out.push(el('p', { class: 'error' }, rl.bans.error));
    out.push(rl.bans.active.length === 0 ? el('p', { class: 'muted bans' }, 'Nobody is banned.')
      : table(['caller', 'ends'], rl.bans.active.map((b) => el('tr', {}, el('td', {}, b.caller), el('td', {}, new Date(b.until).toLocaleString())))
        .concat(rl.bans.more ? [el('tr', {}, el('td', { colspan: 2 }, 'and more'))] : []), { class: 'bans' }));
  }
  const sh = limits.shedding;
  out.push(el('h3', {}, 'In-flight caps'));
  out.push(sh.scopes.length === 0 ? el('p', { class: 'muted' }, 'No in-flight caps are configured.')
    : table(['scope', 'cap', 'in flight', 'waiting', 'shed'], sh.scopes.map((c) => el('tr', { 'data-scope': c.name },
      el('td', {}, c.name), el('td', {}, c.maxInFlight), el('td', {}, c.inFlight), el('td', {}, c.waiting), el('td', { class: 'shed' }, c.shed))), { class: 'caps' }));
  const perKey = sh.perKey || [];
  if (perKey.length > 0) {
    out.push(el('p', { class: 'muted' }, 'Per client address and per caller: 429 TOO_MANY_IN_FLIGHT over the cap; refused within the last ' + dur(traffic.window) + ' and since start'));
    out.push(table(['cap', 'setting', 'cap each', 'holding now', 'largest', 'refused', 'since start'], perKey.map((k) => el('tr', { 'data-cap': k.name },
      el('td', {}, 'per ' + k.name), el('td', {}, el('code', {}, k.setting)), el('td', {}, k.maxInFlight > 0 ? k.maxInFlight : 'none'), el('td', { class: 'holders' }, k.holders),
      el('td', { class: 'largest' }, k.largest), el('td', { class: 'refused' }, num(limited['in_flight_per_' + k.name] || 0, 0)), el('td', { class: 'total' }, k.refused))), { class: 'keycaps' }));
  }
  root.replaceChildren(...out);
}

// bansHeading says where the live bans come from: Redis, this edge's copy
// while Redis does not answer (its state), or the local backend.
function bansHeading(rl) {
  if (!rl.redis) return `Live bans (${rl.bans.source})`;
  if (rl.bans.source === 'redis') return 'Live bans (Redis)';
  return `Live bans (this edge's copy: Redis ${rl.redis.status})`;
}

// How a config came to be applied, by its source (gateway.Source*), and
// who asked: the admin API caller's subject for a reload or a rollback.
const SOURCES = { start: 'when the edge started', signal: 'via SIGHUP', file: 'via a change of the config file', admin: 'via reload', rollback: 'via rollback' };
export function origin(source, by) {
  return (SOURCES[source] || 'via ' + source) + (by ? ' by ' + by : '');
}

export function renderConfig(root, versions, audit, rollback) {
  const live = versions.live;
  const kept = table(['version', 'applied', 'source', ''], versions.versions.map((v) => el('tr', { 'data-version': v.id },
    el('td', {}, el('code', {}, v.id)), el('td', {}, new Date(v.applied).toLocaleString()), el('td', {}, v.source),
    el('td', {}, v.id === live.id ? badge('live', 'ok')
      : (() => { const b = el('button', { type: 'button', class: 'rollback' }, 'Roll back'); b.addEventListener('click', () => rollback(v.id)); return b; })()))),
  { class: 'versions' });
  const entries = audit.audit.slice(0, 10).map((e) => el('li', { class: 'audit ' + e.event, 'data-version': e.version || '', 'data-source': e.source },
    el('div', {}, el('strong', {}, e.event), ' ', el('code', {}, e.version || ''), ' from ', el('code', {}, e.previous || '–'),
      ' ', el('span', { class: 'origin' }, origin(e.source, e.by)), ' at ', new Date(e.time).toLocaleString()),
    e.error ? el('p', { class: 'error' }, e.error) : null,
    e.diff && e.diff.length ? el('pre', { class: 'diff' }, e.diff.map((d) => el('span', { class: 'd' + d[0] }, d + '\n'))) : null));
  // The live version's audit entry names who applied it (a version has
  // only its source).
  const appliedBy = audit.audit.find((e) => e.event === 'applied' && e.version === live.id && e.source === live.source);
  root.replaceChildren(
    el('p', { class: 'live' }, 'Live version ', el('code', { id: 'live-version' }, live.id),
      ` applied ${new Date(live.applied).toLocaleString()} `, el('span', { class: 'origin' }, origin(live.source, appliedBy && appliedBy.by))),
    el('h3', {}, 'Kept versions'), kept,
    el('h3', {}, 'Recent reloads'), entries.length ? el('ol', { class: 'auditlog' }, entries) : el('p', { class: 'muted' }, 'No reloads yet.'),
  );
}
