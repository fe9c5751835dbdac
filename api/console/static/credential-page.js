// What the API keys and OAuth clients pages share: the user's credentials of the session's mode, a
// form to make one (its secret shown once), and revoking with a confirmation. `spec` names the
// resource and how its records read.
import { problemText } from './console-api.js';
import { disclosure } from './disclosure.js';
import { confirmDialog, errorLine, field, h, notify, secretBox, table, when } from './dom.js';
import { permissionList, permissionPicker } from './permission-picker.js';

/**
 * spec: { path, noun, grantsField ('permissions' | 'scopes'), secretField, secretLabel, idColumn: { label, cell },
 * intro }
 */
export function credentialPage(spec) {
  return async function render(main, { api, can }) {
    const writer = can('keys:write');
    const secretSlot = h('div');
    const listError = errorLine();
    const list = h('div');
    const create = writer ? disclosure(`Create an ${spec.noun}`, createForm()) : null;
    main.append(h('p', { class: 'intro' }, spec.intro), secretSlot, create?.node ?? null, h('h2', {}, `Your ${spec.noun}s`), listError.node, list);

    function createForm() {
      const name = h('input', { type: 'text', maxlength: '100', autocomplete: 'off', placeholder: 'What it is for' });
      const picker = permissionPicker(spec.grantsField === 'scopes' ? 'Scopes its tokens may hold' : 'Permissions', can);
      const mode = h('select', {}, h('option', { value: 'live', selected: true }, 'live'), h('option', { value: 'test' }, 'test'));
      const expires = h('input', { type: 'datetime-local' });
      const error = errorLine();
      return h('form', { class: 'form card', 'aria-label': `Create an ${spec.noun}`, onsubmit: async (event) => {
        event.preventDefault();
        error.clear();
        const body = { [spec.grantsField]: picker.chosen() };
        if (name.value.trim()) body.name = name.value.trim();
        body.mode = mode.value;
        if (expires.value) body.expiresAt = new Date(expires.value).toISOString();
        if (body[spec.grantsField].length === 0) {
          error.show(`Choose at least one ${spec.grantsField === 'scopes' ? 'scope' : 'permission'}.`);
          return;
        }
        try {
          const { data } = await api.post(spec.path, body);
          secretSlot.replaceChildren(secretBox(spec.secretLabel(data), data[spec.secretField]));
          secretSlot.dataset.id = String(data.id);
          secretSlot.querySelector('input')?.focus();
          name.value = '';
          expires.value = '';
          picker.reset();
          create.close();
          await draw();
        } catch (failure) {
          error.show(problemText(failure));
        }
      } },
      field('Name', name),
      picker.node,
      field('Mode', mode, `A live ${spec.noun} reaches the live fleet; a test one reaches only test vehicles, geofences and webhooks, for trying an integration out.`),
      field('Expires', expires, 'Empty: it does not expire. In your browser\'s time zone.'),
      error.node,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, `Create ${spec.noun}`)));
    }

    async function revoke(record) {
      const label = record.name ?? spec.idColumn.text(record);
      const sure = await confirmDialog({
        title: `Revoke ${label}?`,
        body: `Every request made with it fails from now on, and what it minted is revoked with it. This cannot be undone.`,
        confirmLabel: 'Revoke', danger: true,
      });
      if (!sure) return;
      listError.clear();
      try {
        await api.delete(`${spec.path}/${record.id}`);
        // A revoked secret is of no use: it leaves the page.
        if (secretSlot.dataset.id === String(record.id)) secretSlot.replaceChildren();
        notify(`${label} revoked`);
        await draw();
      } catch (failure) {
        listError.show(problemText(failure));
      }
    }

    async function draw() {
      const records = await api.all(spec.path);
      records.sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || b.id - a.id);
      list.replaceChildren(table(`Your ${spec.noun}s`, [
        { label: 'Name', cell: (r) => r.name ?? '—' },
        { label: spec.idColumn.label, cell: (r) => h('code', {}, spec.idColumn.text(r)) },
        { label: 'Mode', cell: (r) => h('span', { class: 'badge' }, r.mode) },
        { label: spec.grantsField === 'scopes' ? 'Scopes' : 'Permissions', cell: (r) => permissionList(r[spec.grantsField]) },
        { label: 'Expires', cell: (r) => (r.expiresAt ? when(r.expiresAt) : 'never') },
        { label: 'Last used', cell: (r) => when(r.lastUsedAt) },
        { label: 'Created', cell: (r) => when(r.createdAt) },
        { label: 'State', cell: (r) => state(r) },
        { label: '', cell: (r) => (writer && !r.revokedAt ? h('button', { type: 'button', class: 'danger', onclick: () => revoke(r), 'aria-label': `Revoke ${r.name ?? spec.idColumn.text(r)}` }, 'Revoke') : null) },
      ], records, `No ${spec.noun}s yet.`));
    }

    function state(record) {
      if (record.revokedAt) return h('span', { class: 'badge bad' }, `revoked ${when(record.revokedAt)}`);
      if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) return h('span', { class: 'badge bad' }, 'expired');
      return h('span', { class: 'badge ok' }, 'active');
    }

    await draw();
  };
}
