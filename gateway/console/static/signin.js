// The sign-in page: the admin token the operator types opens a console
// session (POST /admin/session with it as a bearer header; the answer
// sets the HttpOnly session cookie that lets "/" serve the console), and
// stays in this tab's sessionStorage for the console's own requests.
const KEY = 'portico.adminToken';
const NOTE = 'portico.signinNote'; // why the console sent the tab back here
const $ = (id) => document.getElementById(id);

async function signIn(ev) {
  ev.preventDefault();
  const input = $('token');
  const token = input.value.trim();
  input.value = '';
  if (!token) return;
  $('signin-error').textContent = '';
  let res;
  try {
    res = await fetch('/admin/session', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + token, Accept: 'application/json' },
      cache: 'no-store',
      credentials: 'same-origin',
      referrerPolicy: 'no-referrer',
    });
  } catch (err) {
    $('signin-error').textContent = 'Sign-in failed: ' + err.message;
    return;
  }
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    $('signin-error').textContent = body.detail || body.title || res.statusText;
    input.focus();
    return;
  }
  sessionStorage.setItem(KEY, token);
  location.replace('/');
}

// A tab shown this page holds no token: the console left it, or its
// session ended.
sessionStorage.removeItem(KEY);
$('signin-error').textContent = sessionStorage.getItem(NOTE) || '';
sessionStorage.removeItem(NOTE);
$('signin-form').addEventListener('submit', signIn);
$('token').focus();
