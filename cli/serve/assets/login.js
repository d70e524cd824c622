// login.js -- the login page: the one-time token from the address's ?token=
// goes into the form's hidden field (and out of the address bar); the form
// is posted to /login (as JSON, so a refusal comes back as a message to
// show here), and the runs page opens once the session is set.

const form = document.getElementById('login');
const user = document.getElementById('login-user');
const token = document.getElementById('login-token');
const error = document.getElementById('login-error');
const submit = document.getElementById('login-submit');

const params = new URLSearchParams(location.search);
token.value = params.get('token') || '';
if (params.get('error')) error.textContent = params.get('error');
if (params.get('user')) user.value = params.get('user');
document.getElementById('login-no-token').hidden = token.value !== '';
if (token.value) history.replaceState(null, '', '/login');

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  error.textContent = '';
  if (!token.value) {
    error.textContent = 'No login token: open the URL lil serve printed.';
    return;
  }
  submit.disabled = true;
  try {
    const res = await fetch('/login', {
      method: 'POST',
      credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      body: JSON.stringify({user: user.value.trim(), token: token.value}),
    });
    if (res.ok) {
      location.replace('/#/');
      return;
    }
    let msg = `Login refused (HTTP ${res.status})`;
    try {
      const doc = await res.json();
      if (doc && typeof doc.error === 'string') msg = doc.error;
    } catch (err) {
      // not JSON: keep the status
    }
    error.textContent = msg;
  } catch (err) {
    error.textContent = 'lil serve cannot be reached: ' + err.message;
  } finally {
    submit.disabled = false;
  }
});
