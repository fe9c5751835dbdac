// Entry point: the login box until there is a key, then a live session of the map with it.
import { forgetKey, showLogin, storedKey } from './login-box.js';
import { startSession } from './session.js';

let session;

function open(key) {
  document.getElementById('app').hidden = false;
  session = startSession(key, {
    // A 401 means the key is wrong, revoked or expired: nothing more can be shown with it.
    onUnauthorized: (error) => logOut(`The API refused the key: ${error.message}`),
  });
}

function logOut(message) {
  session?.stop();
  session = undefined;
  forgetKey();
  showLogin(message, open);
}

document.getElementById('logout').addEventListener('click', () => logOut());

const key = storedKey();
if (key) open(key);
else showLogin(undefined, open);
