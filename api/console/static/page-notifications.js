// Notifications: the account's notification rules (which events, which vehicles, when, to whom on
// which channels), a new one, changing, enabling, disabling and deleting one, and a rule's recent
// deliveries (`#/notifications/<id>` opens them). The editor only with notifications:write.
import { problemText } from './console-api.js';
import { disclosure } from './disclosure.js';
import { timeText } from './api-time.js';
import { confirmDialog, errorLine, h, notify, table } from './dom.js';
import { CHANNEL_NAMES, DAY_NAMES, ruleForm } from './notification-rule-form.js';

/** Days as a reader says them: `Mon–Fri`, `every day`, `Sat, Sun`. */
function daysText(days) {
  const sorted = [...days].sort((a, b) => a - b);
  if (sorted.length === 7) return 'every day';
  const consecutive = sorted.length > 2 && sorted.every((d, i) => i === 0 || d === sorted[i - 1] + 1);
  if (consecutive) return `${DAY_NAMES[sorted[0] - 1]}–${DAY_NAMES[sorted[sorted.length - 1] - 1]}`;
  return sorted.map((d) => DAY_NAMES[d - 1]).join(', ');
}

const scheduleText = (rule) => (rule.schedule ? `${daysText(rule.schedule.days)} ${rule.schedule.from}–${rule.schedule.to} (${rule.timezone})` : 'any time');

const status = (r) => (r.enabled ? h('span', { class: 'badge ok' }, 'enabled') : h('span', { class: 'badge bad' }, 'disabled'));
const deliveryStatus = (d) => h('span', { class: `badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : ''}` }, d.status);

/** What the session may offer in the editor: each list null when its role may not read it. */
async function loadChoices(api, can, session) {
  const maybe = (allowed, read) => (allowed ? read().catch(() => null) : Promise.resolve(null));
  const [users, groups, vehicles, geofences] = await Promise.all([
    maybe(can('users:read'), async () => (await api.get('/users')).data),
    maybe(can('users:read'), async () => (await api.get('/groups')).data),
    maybe(can('vehicles:read'), () => api.all('/vehicles')),
    maybe(can('geofences:read'), async () => (await api.get('/geofences')).data),
  ]);
  return { users: users ?? [session.user], groups, vehicles, geofences, timezone: session.user.timezone };
}

export async function render(main, { api, can, session, rest, navigate }) {
  const writer = can('notifications:write');
  const choices = await loadChoices(api, can, session);
  const groupName = (id) => choices.groups?.find((g) => g.id === id)?.name ?? `group ${id}`;
  const vehicleName = (id) => choices.vehicles?.find((v) => v.id === id)?.name ?? id;

  const editSlot = h('div');
  const listError = errorLine();
  const list = h('div');
  const deliveries = h('section', { 'aria-label': 'Deliveries of the rule' });
  main.append(h('p', { class: 'intro' },
    'Rules send people a message when events happen: by email, a browser notification, Telegram or SMS. ',
    'Each person sets their own addresses in ', h('a', { href: '#/my-notifications' }, 'My notifications'), '.'));
  const createHolder = h('div');
  const create = disclosure('Create a rule', createHolder);
  const newForm = () => createHolder.replaceChildren(ruleForm({
    title: 'Create a rule', submitLabel: 'Create rule', choices,
    save: async (body) => {
      await api.post('/notification-rules', body);
      notify(`Rule ${body.name} created`);
      newForm();
      create.close();
      await draw();
    },
  }));
  if (writer) {
    newForm();
    main.append(create.node);
  }
  main.append(h('h2', {}, 'Rules'), listError.node, editSlot, list, deliveries);

  const act = async (work, done) => {
    listError.clear();
    try { await work(); if (done) notify(done); await draw(); } catch (failure) { listError.show(problemText(failure)); }
  };

  function edit(rule) {
    editSlot.replaceChildren(ruleForm({
      title: `Change the rule ${rule.name}`, rule, submitLabel: 'Save', choices,
      save: async (body) => { await api.patch(`/notification-rules/${rule.id}`, body); editSlot.replaceChildren(); notify('Rule saved'); await draw(); },
      cancel: () => editSlot.replaceChildren(),
    }));
    editSlot.querySelector('input')?.focus();
  }

  async function remove(rule) {
    const sure = await confirmDialog({ title: `Delete the rule ${rule.name}?`, body: 'Nobody is notified by it any more, and its deliveries are deleted.', confirmLabel: 'Delete', danger: true });
    if (!sure) return;
    await act(() => api.delete(`/notification-rules/${rule.id}`), 'Rule deleted');
    if (rest === String(rule.id)) navigate('/notifications');
  }

  function actions(r) {
    const buttons = [h('a', { href: `#/notifications/${r.id}`, class: 'button-link', 'aria-label': `Deliveries of ${r.name}` }, 'Deliveries')];
    if (writer) {
      buttons.push(
        h('button', { type: 'button', 'aria-label': `Edit ${r.name}`, onclick: () => edit(r) }, 'Edit'),
        r.enabled
          ? h('button', { type: 'button', 'aria-label': `Disable ${r.name}`, onclick: () => act(() => api.patch(`/notification-rules/${r.id}`, { enabled: false }), 'Rule disabled') }, 'Disable')
          : h('button', { type: 'button', 'aria-label': `Enable ${r.name}`, onclick: () => act(() => api.patch(`/notification-rules/${r.id}`, { enabled: true }), 'Rule enabled') }, 'Enable'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${r.name}`, onclick: () => remove(r) }, 'Delete'));
    }
    return h('div', { class: 'actions' }, buttons);
  }

  const vehiclesText = (v) => (v.scope === 'groups' ? `groups: ${v.groupIds.map(groupName).join(', ')}`
    : v.scope === 'list' ? v.vehicleIds.map(vehicleName).join(', ') : 'all');
  const recipientsText = (r) => h('ul', { class: 'members' }, r.recipients.map((x) => h('li', {}, `${x.name ?? x.email ?? `user ${x.userId}`}: ${x.channels.map((c) => CHANNEL_NAMES[c] ?? c).join(', ')}`)));

  async function draw() {
    const rules = await api.all('/notification-rules');
    list.replaceChildren(table('Notification rules', [
      { label: 'Name', cell: (r) => r.name },
      { label: 'Kinds', cell: (r) => h('span', { class: 'codes' }, r.events.map((e) => h('code', {}, e))) },
      { label: 'Vehicles', cell: (r) => [vehiclesText(r.vehicles), r.geofenceIds ? h('small', { class: 'hint' }, `${r.geofenceIds.length} geofence(s) only`) : null] },
      { label: 'When', cell: scheduleText },
      { label: 'Recipients', cell: recipientsText },
      { label: 'State', cell: status },
      { label: '', cell: actions },
    ], rules, 'No rules yet.'));
    const shown = rules.find((r) => String(r.id) === rest);
    if (shown) await drawDeliveries(shown);
    else deliveries.replaceChildren(rest ? h('p', { class: 'error', role: 'alert' }, `There is no rule ${rest} in the account.`) : '');
  }

  /** The rule's deliveries, newest first, 50 at a time. */
  async function drawDeliveries(rule) {
    const body = h('div');
    const more = h('button', { type: 'button', hidden: true }, 'Older deliveries');
    const rows = [];
    let cursor = null;
    const load = async () => {
      const page = await api.get(`/notification-rules/${rule.id}/deliveries?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      rows.push(...page.data);
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
      body.replaceChildren(table(`Deliveries of ${rule.name}`, [
        { label: 'Status', cell: deliveryStatus },
        { label: 'Channel', cell: (d) => CHANNEL_NAMES[d.channel] ?? d.channel },
        { label: 'Recipient', cell: (d) => (d.recipient ? (d.recipient.name ? `${d.recipient.name} (${d.recipient.email})` : d.recipient.email) : '—') },
        { label: 'Event', cell: (d) => (d.event ? h('code', {}, d.event.type) : '—') },
        { label: 'Attempts', cell: (d) => String(d.attempts) },
        { label: 'Error', cell: (d) => d.lastError ?? '—' },
        { label: 'Last attempt', cell: (d) => timeText(d.lastAttemptAt) },
        { label: 'Created', cell: (d) => timeText(d.createdAt) },
      ], rows, 'No deliveries yet.'));
    };
    more.addEventListener('click', () => load().catch((e) => listError.show(problemText(e))));
    await load();
    deliveries.replaceChildren(
      h('h2', {}, `Deliveries of ${rule.name}`),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => drawDeliveries(rule).catch((e) => listError.show(problemText(e))) }, 'Refresh'), h('a', { href: '#/notifications' }, 'Close')),
      body,
      h('div', { class: 'actions' }, more));
  }

  await draw();
}
