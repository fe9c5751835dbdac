// Entry point: signed in (the session cookie), the map at once; otherwise the login box (email and
// password, or an API key) until there is a session or a key.
import { forgetKey, showLogin, storedKey } from './login-box.js';
import { startSession } from './session.js';

let session;
let signedIn;

/** Opens the map with `key`, or with the session cookie when `key` is null (`csrfToken` for its writes). */
function open(key, csrfToken) {
  signedIn = key === null ? { csrfToken } : undefined;
  document.getElementById('app').hidden = false;
  session = startSession(key, {
    csrfToken,
    // A 401 means the key or session is wrong, revoked or expired: nothing more can be shown with it.
    onUnauthorized: (error) => logOut(`The API refused ${key ? 'the key' : 'the session'}: ${error.message}`),
  });
}

function logOut(message) {
  session?.stop();
  session = undefined;
  if (signedIn && !message) {
    fetch('/api/v1/auth/sign-out', { method: 'POST', headers: { 'X-CSRF-Token': signedIn.csrfToken }, credentials: 'same-origin' }).catch(() => {});
  }
  signedIn = undefined;
  forgetKey();
  login(message);
}

function login(message) {
  showLogin(message, (key) => open(key));
  const form = document.getElementById('sign-in-form');
  const error = document.getElementById('sign-in-error');
  error.hidden = true;
  form.onsubmit = async (submitted) => {
    submitted.preventDefault();
    const email = document.getElementById('sign-in-email').value.trim();
    const password = document.getElementById('sign-in-password');
    const response = await fetch('/api/v1/auth/sign-in', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, credentials: 'same-origin',
      body: JSON.stringify({ email, password: password.value }),
    }).catch(() => undefined);
    const body = await response?.json().catch(() => null);
    password.value = '';
    if (!response?.ok) {
      error.textContent = body?.error ?? 'The server cannot be reached';
      error.hidden = false;
      return;
    }
    document.getElementById('login').hidden = true;
    open(null, body.data.csrfToken);
  };
}

document.getElementById('logout').addEventListener('click', () => logOut());
// Inside the console (a frame of this origin), the console's own Sign out ends the session.
if (window.top !== window) document.body.classList.add('framed');

const key = storedKey();
if (key) open(key);
else {
  // A session this browser already has opens the map without asking anything.
  fetch('/api/v1/auth/session', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(async (response) => (response.ok ? (await response.json()).data : undefined))
    .catch(() => undefined)
    .then((current) => (current ? open(null, current.csrfToken) : login()));
}
