// Users and roles: the account's users with their roles and vehicle groups; inviting one (a one-time
// link to set their password, shown once), a new link for one who lost theirs, changing a role, and
// removing a user. The API applies the role rules and says why it refuses.
import { problemText } from './console-api.js';
import { disclosure } from './disclosure.js';
import { confirmDialog, errorLine, field, h, notify, secretBox, table, when } from './dom.js';

const ROLES = ['owner', 'admin', 'dispatcher', 'viewer'];
const ROLE_HINT = 'owner: everything, and the owners; admin: everything but the owners; dispatcher: runs the fleet (travels, geofences, commands), no webhooks, users or audit log; viewer: reads the fleet.';

const roleSelect = (selected, label) => h('select', label ? { 'aria-label': label } : {}, ROLES.map((r) => h('option', { value: r, selected: r === selected }, r)));

export async function render(main, { api, can, session }) {
  const writer = can('users:write');
  const linkSlot = h('div');
  const listError = errorLine();
  const list = h('div');
  main.append(h('p', { class: 'intro' }, `Each user has one role, which bounds everything they and their keys may do. ${ROLE_HINT}`), linkSlot);
  const invite = writer ? disclosure('Invite a user', inviteForm()) : null;
  if (invite) main.append(invite.node);
  main.append(h('h2', {}, 'Users of the account'), listError.node, list);

  function showLink(user, link) {
    linkSlot.replaceChildren(secretBox(
      `A one-time link for ${user.email} to set their password. Send it to them yourself; it works once, until ${when(link.expiresAt)}.`,
      link.url,
    ));
    linkSlot.querySelector('input')?.focus();
  }

  function inviteForm() {
    const email = h('input', { type: 'email', required: true, autocomplete: 'off' });
    const name = h('input', { type: 'text', maxlength: '200', autocomplete: 'off' });
    const role = roleSelect('viewer');
    const timezone = h('input', { type: 'text', required: true, value: Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC', spellcheck: 'false' });
    const error = errorLine();
    return h('form', { class: 'form card', 'aria-label': 'Invite a user', onsubmit: async (event) => {
      event.preventDefault();
      error.clear();
      let user;
      try {
        user = (await api.post('/users', { email: email.value.trim(), name: name.value.trim() || null, role: role.value, timezone: timezone.value.trim() })).data;
      } catch (failure) {
        error.show(problemText(failure));
        return;
      }
      email.value = '';
      name.value = '';
      invite.close();
      try {
        showLink(user, (await api.post(`/users/${user.id}/sign-in-link`)).data);
      } catch (failure) {
        error.show(`${user.email} was added, but no link was made: ${problemText(failure)}`);
      }
      await draw();
    } },
    field('Email', email),
    field('Name', name),
    field('Role', role, 'No higher than your own; only an owner makes an owner.'),
    field('Time zone', timezone, 'An IANA time zone such as America/Mexico_City: their reports and local times are in it.'),
    error.node,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Invite')));
  }

  async function act(work, done) {
    listError.clear();
    try {
      await work();
      if (done) notify(done);
    } catch (failure) {
      listError.show(problemText(failure));
    }
    await draw();
  }

  async function changeRole(user, select) {
    const to = select.value;
    if (to === user.role) return;
    const sure = await confirmDialog({
      title: `Make ${user.email} ${to === 'admin' || to === 'owner' ? 'an' : 'a'} ${to}?`,
      body: 'The new role holds at once, on their keys and sessions too.',
      confirmLabel: 'Change role',
    });
    if (!sure) { select.value = user.role; return; }
    await act(() => api.patch(`/users/${user.id}`, { role: to }), `${user.email} is now ${to}`);
  }

  async function newLink(user) {
    const sure = await confirmDialog({
      title: `A new sign-in link for ${user.email}?`,
      body: 'Whoever opens it sets the user\'s password; when it is used, every session of the user ends.',
      confirmLabel: 'Make link',
    });
    if (!sure) return;
    listError.clear();
    try { showLink(user, (await api.post(`/users/${user.id}/sign-in-link`)).data); } catch (failure) { listError.show(problemText(failure)); }
  }

  async function remove(user) {
    const sure = await confirmDialog({
      title: `Remove ${user.email}?`,
      body: 'Their API keys, OAuth clients and sessions are revoked and their webhooks deleted, at once. The audit log keeps naming them.',
      confirmLabel: 'Remove', danger: true,
    });
    if (sure) await act(() => api.delete(`/users/${user.id}`), `${user.email} removed`);
  }

  async function draw() {
    const users = (await api.get('/users')).data;
    list.replaceChildren(table('Users of the account', [
      { label: 'Name', cell: (u) => (u.id === session.user.id ? [u.name ?? '—', ' ', h('span', { class: 'badge ok' }, 'you')] : u.name ?? '—') },
      { label: 'Email', cell: (u) => u.email },
      { label: 'Role', cell: (u) => {
        if (!writer) return u.role;
        const select = roleSelect(u.role, `Role of ${u.email}`);
        select.addEventListener('change', () => changeRole(u, select));
        return select;
      } },
      { label: 'Vehicle groups', cell: (u) => (u.groups.length ? u.groups.map((g) => g.name).join(', ') : '—') },
      { label: 'Time zone', cell: (u) => u.timezone },
      { label: 'Added', cell: (u) => when(u.createdAt) },
      { label: '', cell: (u) => (writer ? h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => newLink(u), 'aria-label': `New sign-in link for ${u.email}` }, 'Sign-in link'),
        h('button', { type: 'button', class: 'danger', onclick: () => remove(u), 'aria-label': `Remove ${u.email}` }, 'Remove')) : null) },
    ], users, 'No users.'));
  }

  await draw();
}
