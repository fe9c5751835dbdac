// The login box, and where the API key is kept: this tab's sessionStorage only, so it is gone when the
// tab closes and never reaches localStorage, a cookie or a URL.

const STORAGE_KEY = 'fleetcore.map.apiKey';

export const storedKey = () => sessionStorage.getItem(STORAGE_KEY);
export const forgetKey = () => sessionStorage.removeItem(STORAGE_KEY);

/**
 * Shows the login box (with `message`, when the page came back to it after a failure) and calls
 * `onKey` with the key entered, once it is stored.
 */
export function showLogin(message, onKey) {
  const login = document.getElementById('login');
  const form = document.getElementById('login-form');
  const input = document.getElementById('api-key');
  const error = document.getElementById('login-error');
  error.textContent = message ?? '';
  error.hidden = !message;
  document.getElementById('app').hidden = true;
  login.hidden = false;
  input.focus();
  form.onsubmit = (submitted) => {
    // The form never submits: its key must not travel in a request body or URL of its own.
    submitted.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    input.value = '';
    sessionStorage.setItem(STORAGE_KEY, key);
    login.hidden = true;
    onKey(key);
  };
}
