// The console's entry: polling the admin API, reload, rollback, sign-out.
// The browser got this page with its console session (the sign-in page,
// signin.js, opened it); the admin token lives in sessionStorage (this
// tab only) and leaves the page only as an Authorization header on
// same-origin fetches, which send no cookie: the admin API answers the
// bearer alone, so a change never rests on the cookie.
import { renderUpstreams, renderLimits, renderConfig, TREND_MINUTES, dur, compared } from './render.js';

const KEY = 'portico.adminToken';
const NOTE = 'portico.signinNote'; // what the sign-in page says on arrival
const POLL_MS = 2000;
const $ = (id) => document.getElementById(id);

let timer = 0;
let polling = false;

// api fetches an admin endpoint with the token; it returns the parsed
// JSON, or throws an Error carrying the problem's status and detail.
async function api(path, method = 'GET') {
  const token = sessionStorage.getItem(KEY);
  const res = await fetch(path, {
    method,
    headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' },
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.detail || body.title || res.statusText);
    err.status = res.status;
    throw err;
  }
  return body;
}

// signOut ends the console session (DELETE /admin/session clears its
// cookie), forgets the token and reloads: "/" is then the sign-in page,
// which says note.
async function signOut(note) {
  clearTimeout(timer);
  polling = false;
  sessionStorage.removeItem(KEY);
  if (note) sessionStorage.setItem(NOTE, note);
  await fetch('/admin/session', { method: 'DELETE', credentials: 'same-origin', cache: 'no-store' }).catch(() => {});
  location.replace('/');
}

function start() {
  if (!polling) {
    polling = true;
    poll();
  }
}

async function refresh() {
  const [ups, traffic, limits, versions, audit] = await Promise.all([
    api('/admin/upstreams'), api('/admin/traffic?minutes=' + TREND_MINUTES), api('/admin/limits'),
    api('/admin/versions'), api('/admin/audit'),
  ]);
  renderUpstreams($('upstreams'), ups, traffic);
  renderLimits($('limits'), limits, traffic);
  renderConfig($('config'), versions, audit, confirmRollback);
  $('live').textContent = 'config ' + versions.live.id;
  $('window').textContent = dur(traffic.window);
  $('trend-span').textContent = TREND_MINUTES + ' min';
  $('offset').textContent = compared(traffic.offset);
  $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  $('error').textContent = '';
}

async function poll() {
  if (!polling) return;
  try {
    await refresh();
  } catch (err) {
    if (err.status === 401 || err.status === 403) {
      signOut(err.message);
      return;
    }
    $('error').textContent = 'Update failed: ' + err.message;
  }
  if (polling) timer = setTimeout(poll, POLL_MS);
}

// confirmRollback asks in a dialog, then rolls back to version id.
function confirmRollback(id) {
  const dlg = $('confirm');
  $('confirm-text').textContent = 'Roll back the running config of this edge to kept version ' + id + '? ' +
    'It is applied from memory at once: new requests get it, requests in flight finish on the config they started with.';
  $('confirm-file').textContent = 'The config file on disk is unchanged. The next reload of the file ' +
    '(the Reload button, SIGHUP, or an edit of the file) or a restart applies the file again, undoing this rollback.';
  dlg.onclose = async () => {
    if (dlg.returnValue !== 'ok') return;
    try {
      await api('/admin/rollback?version=' + encodeURIComponent(id), 'POST');
      await refresh();
    } catch (err) {
      $('error').textContent = 'Rollback failed: ' + err.message;
    }
  };
  dlg.returnValue = '';
  dlg.showModal();
}

// reload asks the edge to re-read its config file and says what came of it.
async function reload() {
  const out = $('reload-result');
  out.textContent = 'reloading…';
  try {
    const res = await api('/admin/reload', 'POST');
    out.textContent = res.changed ? 'applied version ' + res.version.id : 'the file is unchanged';
    await refresh();
  } catch (err) {
    out.textContent = 'rejected: ' + err.message;
  }
}

$('reload').addEventListener('click', reload);
$('signout').addEventListener('click', () => signOut('Signed out.'));
// A tab without the token (another tab signed this browser in) signs in
// itself: the cookie is the browser's, the token the tab's.
if (sessionStorage.getItem(KEY)) start(); else signOut('Sign in to use the console in this tab.');
