// My account: who I am, my password, and my signed-in sessions (end one, or all of them everywhere).
import { problemText } from './console-api.js';
import { errorLine, field, h, notify, table, when } from './dom.js';

export async function render(main, { api, session }) {
  const me = session.user;
  main.append(h('dl', { class: 'card' },
    h('dt', {}, 'Email'), h('dd', {}, me.email),
    h('dt', {}, 'Name'), h('dd', {}, me.name ?? '—'),
    h('dt', {}, 'Role'), h('dd', {}, session.role),
    h('dt', {}, 'Time zone'), h('dd', {}, me.timezone)));

  const current = h('input', { type: 'password', autocomplete: 'current-password', required: true });
  const fresh = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: '10' });
  const passwordError = errorLine();
  main.append(h('h2', {}, 'Change my password'), h('form', { class: 'form card', onsubmit: async (event) => {
    event.preventDefault();
    passwordError.clear();
    try {
      const { data } = await api.post('/auth/password', { currentPassword: current.value, newPassword: fresh.value });
      current.value = '';
      fresh.value = '';
      notify(`Password changed; ${data.ended} other session(s) ended`);
      await drawSessions();
    } catch (error) {
      passwordError.show(problemText(error));
    }
  } }, field('Current password', current), field('New password', fresh), passwordError.node,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Change password'))));

  const sessions = h('div');
  main.append(h('h2', {}, 'Where I am signed in'), sessions, h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      await api.post('/auth/sign-out-everywhere').catch((error) => notify(problemText(error)));
      location.reload();
    } }, 'Sign out everywhere')));

  async function drawSessions() {
    const list = (await api.get('/auth/sessions')).data;
    sessions.replaceChildren(table('My sessions', [
      { label: 'Browser', cell: (s) => s.userAgent ?? 'unknown' },
      { label: 'Address', cell: (s) => s.address ?? '—' },
      { label: 'Signed in', cell: (s) => when(s.createdAt) },
      { label: 'Last used', cell: (s) => when(s.lastSeenAt) },
      { label: '', cell: (s) => (s.current ? h('span', { class: 'badge ok' }, 'this one') : h('button', { type: 'button', onclick: async () => {
        try { await api.delete(`/auth/sessions/${s.id}`); notify('Session ended'); await drawSessions(); } catch (error) { notify(problemText(error)); }
      } }, 'End')) },
    ], list));
  }
  await drawSessions();
}
