// The one-time link's page: the token is in the fragment (#token=...), which never reaches a server.
const form = document.getElementById('set-password-form');
const result = document.getElementById('set-password-result');
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname); // the token leaves the address bar and history
if (!token) result.textContent = 'This link has no token: ask an owner or admin of your account for a new one (the console\'s Users page).';

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!token) return;
  const password = document.getElementById('new-password').value;
  const response = await fetch('/api/v1/auth/set-password', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token, password }),
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) {
    form.querySelector('button').disabled = true;
    result.textContent = `Password set for ${body.data.email}. Sign in to the console: `;
    const link = document.createElement('a');
    link.href = '/console';
    link.textContent = '/console';
    result.append(link);
  } else {
    result.textContent = body.error ?? `Failed (${response.status})`;
  }
});
