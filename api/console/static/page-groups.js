// Vehicle groups: named sets of vehicles granted to users, who then see those vehicles. The list, a
// new group, renaming and deleting one; `#/groups/<id>` opens one to add and remove its vehicles and
// grant it to users or take it back. A change sends the whole new list, as PATCH /groups/{id} takes it.
import { problemText } from './console-api.js';
import { disclosure } from './disclosure.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';

export async function render(main, { api, can, rest, navigate }) {
  const writer = can('users:write');
  const pageError = errorLine();
  const list = h('div');
  const detail = h('section', { 'aria-label': 'The group' });
  main.append(h('p', { class: 'intro' }, 'A user sees the vehicles of the groups granted to them, besides those granted to them directly.'));
  const create = writer ? disclosure('Create a group', createForm()) : null;
  if (create) main.append(create.node);
  main.append(h('h2', {}, 'Groups'), pageError.node, list, detail);

  const [vehicles, users] = await Promise.all([api.all('/vehicles'), api.get('/users').then((a) => a.data)]);
  const userName = (id) => { const u = users.find((x) => x.id === id); return u ? (u.name ? `${u.name} (${u.email})` : u.email) : `user ${id}`; };

  function createForm() {
    const name = h('input', { type: 'text', required: true, maxlength: '200', autocomplete: 'off' });
    const error = errorLine();
    return h('form', { class: 'form card', 'aria-label': 'Create a group', onsubmit: async (event) => {
      event.preventDefault();
      error.clear();
      try {
        const { data } = await api.post('/groups', { name: name.value.trim() });
        name.value = '';
        create.close();
        notify(`Group ${data.name} created`);
        navigate(`/groups/${data.id}`);
      } catch (failure) {
        error.show(problemText(failure));
      }
    } }, field('Name', name, 'Unique in the account; then add its vehicles and users.'), error.node,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create group')));
  }

  async function change(group, body, done) {
    pageError.clear();
    try {
      await api.patch(`/groups/${group.id}`, body);
      notify(done);
    } catch (failure) {
      pageError.show(problemText(failure));
    }
    await draw();
  }

  async function rename(group) {
    const input = h('input', { type: 'text', required: true, maxlength: '200', value: group.name });
    const sure = await confirmDialog({ title: `Rename ${group.name}`, body: field('New name', input), confirmLabel: 'Rename' });
    if (sure && input.value.trim() !== group.name) await change(group, { name: input.value.trim() }, 'Group renamed');
  }

  async function remove(group) {
    const sure = await confirmDialog({ title: `Delete ${group.name}?`, body: 'Its users no longer see its vehicles through it. The vehicles and users stay.', confirmLabel: 'Delete', danger: true });
    if (!sure) return;
    pageError.clear();
    try {
      await api.delete(`/groups/${group.id}`);
      notify('Group deleted');
      if (rest === String(group.id)) { navigate('/groups'); return; }
    } catch (failure) {
      pageError.show(problemText(failure));
    }
    await draw();
  }

  async function draw() {
    const groups = (await api.get('/groups')).data;
    list.replaceChildren(table('Groups', [
      { label: 'Name', cell: (g) => h('a', { href: `#/groups/${g.id}` }, g.name) },
      { label: 'Vehicles', cell: (g) => String(g.vehicle_ids.length) },
      { label: 'Users', cell: (g) => (g.user_ids.length ? g.user_ids.map(userName).join(', ') : '—') },
      { label: '', cell: (g) => (writer ? h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => rename(g), 'aria-label': `Rename ${g.name}` }, 'Rename'),
        h('button', { type: 'button', class: 'danger', onclick: () => remove(g), 'aria-label': `Delete ${g.name}` }, 'Delete')) : null) },
    ], groups, 'No groups yet.'));
    const open = groups.find((g) => String(g.id) === rest);
    if (open) drawGroup(open);
    else detail.replaceChildren(rest ? h('p', { class: 'error', role: 'alert' }, `There is no group ${rest}.`) : '');
  }

  /** A list of members, each with a button to take it out, and a select to add one of the others. */
  function members({ title, ids, all, label, field: key, noun }, group) {
    const others = all.filter((m) => !ids.includes(m.id));
    const pick = h('select', { 'aria-label': `${noun} to add` }, h('option', { value: '' }, `Choose a ${noun}…`), others.map((m) => h('option', { value: String(m.id) }, label(m))));
    const add = h('form', { class: 'actions', onsubmit: (event) => {
      event.preventDefault();
      const chosen = all.find((m) => String(m.id) === pick.value);
      if (chosen) void change(group, { [key]: [...ids, chosen.id] }, `${label(chosen)} added`);
    } }, pick, h('button', { type: 'submit' }, key === 'user_ids' ? 'Grant' : 'Add'));
    return [
      h('h3', {}, title),
      ids.length === 0 ? h('p', { class: 'empty' }, 'None.') : h('ul', { class: 'members' }, ids.map((id) => {
        const member = all.find((m) => m.id === id);
        const text = member ? label(member) : String(id);
        return h('li', {}, text, writer ? [' ', h('button', { type: 'button', class: 'link', 'aria-label': `${key === 'user_ids' ? 'Revoke' : 'Remove'} ${text}`,
          onclick: () => change(group, { [key]: ids.filter((x) => x !== id) }, `${text} ${key === 'user_ids' ? 'no longer granted' : 'removed'}`) },
        key === 'user_ids' ? 'revoke' : 'remove')] : null);
      })),
      writer && others.length ? add : null,
    ];
  }

  function drawGroup(group) {
    detail.replaceChildren(
      h('h2', {}, group.name),
      h('div', { class: 'columns' },
        h('div', { class: 'card' }, members({ title: 'Vehicles', ids: group.vehicle_ids, all: vehicles, label: (v) => `${v.name} (${v.id})`, field: 'vehicle_ids', noun: 'vehicle' }, group)),
        h('div', { class: 'card' }, members({ title: 'Granted to', ids: group.user_ids, all: users, label: (u) => userName(u.id), field: 'user_ids', noun: 'user' }, group))),
      h('a', { href: '#/groups' }, 'Close'));
  }

  await draw();
}
