// The audit log: who changed access, webhooks, groups, users and commands, what, when and from
// where; newest first, a page at a time ("Load more" follows next_cursor).
import { problemText } from './console-api.js';
import { errorLine, field, h, when } from './dom.js';

const PAGE = 50;

/** The families of actions the log can be narrowed to (`GET /audit?action=<family>.*`). */
const FAMILIES = [
  ['', 'everything'], ['api_key', 'API keys'], ['oauth_client', 'OAuth clients'], ['webhook', 'webhooks'], ['user', 'users'],
  ['vehicle_group', 'vehicle groups'], ['command', 'commands'], ['maintenance', 'maintenance'], ['vehicle', 'vehicles\' odometer and engine hours'],
];

/** The entry's details in one line: `prefix: fc_live_AbC · permissions: vehicles:read, events:read`. */
function detailText(details) {
  return Object.entries(details ?? {})
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? (value.length ? value.join(', ') : 'none') : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' · ');
}

export async function render(main, { api, can }) {
  const users = can('users:read') ? await api.get('/users').then((a) => a.data).catch(() => []) : [];
  const userLabel = (id) => users.find((u) => u.id === id)?.email ?? (id === null ? null : `user ${id}`);
  const who = (actor) => {
    const by = actor.kind === 'api_key' ? `key ${actor.keyPrefix ?? actor.keyId}`
      : actor.kind === 'oauth_client' ? `OAuth client ${actor.clientId}`
        : actor.kind === 'session' ? 'console (signed in)'
          : 'operator (fleet command)';
    const user = userLabel(actor.userId);
    return user ? [h('span', {}, user), h('small', { class: 'hint' }, by)] : by;
  };

  const target = (t) => (t.type === 'user' && users.some((u) => String(u.id) === t.id) ? `user ${users.find((u) => String(u.id) === t.id).email}` : `${t.type} ${t.id}`);

  const body = h('tbody');
  const error = errorLine();
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const family = h('select', { onchange: () => { cursor = null; shown += 1; body.replaceChildren(); void load(); } },
    FAMILIES.map(([value, label]) => h('option', { value }, label)));
  main.append(
    h('p', { class: 'intro' }, 'Every change of keys, OAuth clients, webhooks, vehicle groups, users, commands and maintenance, recorded with the change itself.'),
    h('div', { class: 'filter' }, field('Show', family)),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('caption', { class: 'visually-hidden' }, 'Audit log, newest first'),
      h('thead', {}, h('tr', {}, ['When', 'Who', 'What', 'Target', 'Details', 'From'].map((c) => h('th', { scope: 'col' }, c)))),
      body)),
    error.node,
    h('div', { class: 'actions' }, more));

  let cursor = null;
  // Which choice of `Show` the table holds: a page that arrives after the choice changed is dropped.
  let shown = 0;
  async function load() {
    const asked = shown;
    error.clear();
    more.disabled = true;
    try {
      const filter = family.value ? `&action=${family.value}.*` : '';
      const page = await api.get(`/audit?limit=${PAGE}${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      if (asked !== shown) return;
      for (const entry of page.data) {
        const cells = [when(entry.occurredAt), who(entry.actor), h('code', {}, entry.action), target(entry.target), detailText(entry.details), entry.address ?? '—'];
        const labels = ['When', 'Who', 'What', 'Target', 'Details', 'From'];
        body.append(h('tr', { 'data-id': entry.id }, cells.map((cell, i) => h('td', { 'data-label': labels[i] }, cell))));
      }
      if (body.children.length === 0) body.append(h('tr', {}, h('td', { colspan: '6', class: 'empty' }, 'Nothing recorded.')));
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
    } catch (failure) {
      error.show(problemText(failure));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener('click', () => void load());
  await load();
}
