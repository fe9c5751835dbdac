// The console's entry point: the sign-in form until there is a session, then the menu (only the
// pages the session's role can use) and the page the URL's hash names.
import { consoleApi } from './console-api.js';
import { h, notify } from './dom.js';
import { PAGES, pageAt } from './pages.js';
import { covers } from './permissions.js';

const byId = (id) => document.getElementById(id);
let ctx;
let leave;
let drawing = 0;

async function currentSession() {
  const response = await fetch('/api/v1/auth/session', { credentials: 'same-origin', headers: { Accept: 'application/json' }, cache: 'no-store' })
    .catch(() => undefined);
  return response?.ok ? (await response.json()).data : undefined;
}

function showSignIn(message) {
  stopPage();
  ctx = undefined;
  byId('shell').hidden = true;
  byId('sign-in').hidden = false;
  const error = byId('sign-in-error');
  error.textContent = message ?? '';
  error.hidden = !message;
  byId('sign-in-email').focus();
}

byId('sign-in-form').addEventListener('submit', async (submitted) => {
  submitted.preventDefault();
  const error = byId('sign-in-error');
  const password = byId('sign-in-password');
  const problem = await signInWith(byId('sign-in-email').value.trim(), password.value);
  password.value = '';
  if (problem) {
    error.textContent = problem;
    error.hidden = false;
    return;
  }
  const session = await currentSession();
  if (session) enter(session);
  else showSignIn('Signed in, but the session was not kept: does the browser accept cookies from this site?');
});

byId('sign-out').addEventListener('click', async () => {
  await ctx?.api.post('/auth/sign-out').catch(() => {});
  showSignIn('Signed out.');
});

byId('menu-toggle').addEventListener('click', () => {
  const open = byId('nav').classList.toggle('open');
  byId('menu-toggle').setAttribute('aria-expanded', String(open));
});

const visible = (page) => page.needs.every((p) => covers(ctx.session.permissions, p));

function enter(session) {
  byId('sign-in').hidden = true;
  byId('shell').hidden = false;
  const api = consoleApi(session.csrfToken, (error) => showSignIn(`Your session has ended: ${error.message}`));
  ctx = {
    api,
    session,
    can: (permission) => covers(session.permissions, permission),
    navigate: (path) => { location.hash = `#${path}`; },
  };
  byId('who').textContent = `${session.user.name ?? session.user.email} · ${session.role}`;
  drawMenu();
  void route();
}

function drawMenu() {
  const sections = [...new Set(PAGES.map((p) => p.section))];
  byId('nav').replaceChildren(...sections.map((section) => h('section', {},
    h('h2', {}, section),
    h('ul', {}, PAGES.filter((p) => p.section === section && visible(p)).map((p) => h('li', {}, h('a', { href: `#${p.path}`, 'data-path': p.path }, p.title)))))));
}

function stopPage() {
  try { leave?.(); } catch { /* a page that fails to stop must not keep the next from drawing */ }
  leave = undefined;
}

async function route() {
  if (!ctx) return;
  const [path, search = ''] = (location.hash.slice(1) || '/').split('?');
  const found = pageAt(path);
  const main = byId('page');
  stopPage();
  byId('nav').classList.remove('open');
  byId('menu-toggle').setAttribute('aria-expanded', 'false');
  for (const link of byId('nav').querySelectorAll('a')) {
    if (link.dataset.path === found?.page.path) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const drawn = ++drawing;
  if (!found || !visible(found.page)) {
    main.replaceChildren(h('h1', {}, 'Not here'), h('p', {}, found ? 'Your role does not include this page.' : 'There is no such page.'), h('a', { href: '#/' }, 'Back to the overview'));
    return;
  }
  document.title = `${found.page.title} · fleetcore console`;
  main.replaceChildren(h('h1', {}, found.page.title), h('p', { class: 'loading' }, 'Loading…'));
  try {
    const module = await found.page.load();
    if (drawn !== drawing || !ctx) return;
    // Each drawing gets a container of its own: a page still finishing an earlier drawing (an answer
    // arriving after the reader moved on) writes into a container no longer on the page.
    const view = h('div', { class: 'view' });
    main.replaceChildren(h('h1', {}, found.page.title), view);
    const stop = await module.render(view, { ...ctx, rest: found.rest, query: new URLSearchParams(search) });
    if (drawn === drawing) leave = stop;
    else stop?.();
  } catch (error) {
    if (drawn !== drawing) return;
    main.append(h('p', { class: 'error', role: 'alert' }, error?.message ?? String(error)));
  }
  if (drawn === drawing) main.focus({ preventScroll: true });
}

window.addEventListener('hashchange', () => {
  // The setup link pasted into a tab already showing the sign-in form changes only the hash.
  if (!ctx && location.hash.startsWith('#setup=')) showSetup(location.hash.slice('#setup='.length));
  else void route();
});
window.addEventListener('unhandledrejection', (event) => notify(event.reason?.message ?? String(event.reason)));

/** Signs in with an email and password; the API's error, or undefined once signed in. */
async function signInWith(email, password) {
  const response = await fetch('/api/v1/auth/sign-in', {
    method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ email, password }),
  }).catch(() => undefined);
  if (response?.ok) return undefined;
  return (await response?.json().catch(() => null))?.error ?? 'The server cannot be reached';
}

/**
 * The first account's setup, from the link `fleet serve` printed on a database with no account. The
 * token leaves the address bar at once (it is a credential until used).
 */
function showSetup(token) {
  history.replaceState(null, '', location.pathname);
  byId('sign-in').hidden = true;
  byId('setup').hidden = false;
  byId('setup-timezone').value = Intl.DateTimeFormat().resolvedOptions().timeZone ?? '';
  byId('setup-account').focus();
  byId('setup-form').onsubmit = async (submitted) => {
    submitted.preventDefault();
    const error = byId('setup-error');
    error.hidden = true;
    const email = byId('setup-email').value.trim();
    const password = byId('setup-password').value;
    const name = byId('setup-name').value.trim();
    const response = await fetch('/api/v1/auth/setup', {
      method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ token, accountName: byId('setup-account').value.trim(), email, ...(name ? { name } : {}), timezone: byId('setup-timezone').value.trim(), password }),
    }).catch(() => undefined);
    if (!response?.ok) {
      error.textContent = (await response?.json().catch(() => null))?.error ?? 'The server cannot be reached';
      error.hidden = false;
      return;
    }
    byId('setup').hidden = true;
    const problem = await signInWith(email, password);
    const session = problem ? undefined : await currentSession();
    if (session) {
      location.hash = '#/keys';
      enter(session);
    } else showSignIn(problem ?? 'Account created: sign in.');
  };
}

const setupToken = location.hash.startsWith('#setup=') ? location.hash.slice('#setup='.length) : undefined;
const session = await currentSession();
if (session) enter(session);
else if (setupToken) showSetup(setupToken);
else showSignIn();
