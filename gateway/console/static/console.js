// The console's entry: sign-in, polling the admin API, rollback.
// The admin token lives in sessionStorage (this tab only) and leaves the
// page only as an Authorization header on same-origin fetches.
import { renderUpstreams, renderLimits, renderConfig, TREND_MINUTES, dur, compared } from './render.js';

const KEY = 'portico.adminToken';
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

function showSignIn(message) {
  clearTimeout(timer);
  polling = false;
  sessionStorage.removeItem(KEY);
  $('app').hidden = true;
  $('signout').hidden = true;
  $('signin').hidden = false;
  $('live').textContent = '';
  $('updated').textContent = '';
  $('signin-error').textContent = message || '';
  $('token').focus();
}

function showApp() {
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = false;
  $('signin-error').textContent = '';
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
      showSignIn(err.message);
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

async function signIn(ev) {
  ev.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  input.value = '';
  if (!token) return;
  sessionStorage.setItem(KEY, token);
  try {
    await api('/admin/versions');
  } catch (err) {
    showSignIn(err.status ? err.message : 'Sign-in failed: ' + err.message);
    return;
  }
  showApp();
}

$('signin-form').addEventListener('submit', signIn);
$('reload').addEventListener('click', reload);
$('signout').addEventListener('click', () => showSignIn('Signed out.'));
if (sessionStorage.getItem(KEY)) showApp(); else showSignIn('');
