// The form of a notification rule: its name, the event kinds (by family), which vehicles and
// geofences, when (a weekly schedule or any time), how often at most per vehicle, and who gets it on
// which channels. It builds the body POST and PATCH /notification-rules take; the API checks it.
import { NOTIFIABLE_EVENT_TYPES } from './catalogs.js';
import { problemText } from './console-api.js';
import { errorLine, field, h } from './dom.js';

let forms = 0;

export const CHANNEL_NAMES = { email: 'Email', push: 'Browser push', telegram: 'Telegram', sms: 'SMS' };
export const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const FAMILY_NAMES = { vehicle: 'Vehicle events', device: 'Tracker events', driver: 'Driver events', travel: 'Travel events', command: 'Command events' };

/** A checkbox with its label after it. */
function check(id, label, attributes = {}) {
  const box = h('input', { type: 'checkbox', id, ...attributes });
  return { box, item: h('div', { class: 'check' }, box, ' ', h('label', { for: id }, label)) };
}

/** A radio button with its label after it. */
function radio(id, name, value, label, checked) {
  const button = h('input', { type: 'radio', id, name, value, checked });
  return { button, item: h('div', { class: 'check' }, button, ' ', h('label', { for: id }, label)) };
}

/**
 * The kinds as checkboxes, one fieldset per family (`vehicle`, `device`…), each with a box for the
 * whole family (`vehicle.*`: later kinds of the family too). Other patterns a rule holds (a
 * sub-family such as `vehicle.geofence.*`) are kept as boxes of their own, ticked.
 */
function eventPicker(prefix, chosen) {
  const families = [...new Set(NOTIFIABLE_EVENT_TYPES.map((t) => t.split('.')[0]))];
  const others = chosen.filter((p) => !NOTIFIABLE_EVENT_TYPES.includes(p) && !families.some((f) => p === `${f}.*`));
  const pickers = families.map((family) => {
    const whole = check(`${prefix}-family-${family}`, [h('code', {}, `${family}.*`), ' every kind of the family'], { checked: chosen.includes(`${family}.*`) });
    const kinds = NOTIFIABLE_EVENT_TYPES.filter((t) => t.startsWith(`${family}.`)).map((type) => ({ type, ...check(`${prefix}-${type}`, h('code', {}, type), { value: type, checked: chosen.includes(type) }) }));
    whole.item.classList.add('all');
    const follow = () => {
      for (const k of kinds) { k.box.disabled = whole.box.checked; if (whole.box.checked) k.box.checked = true; }
    };
    whole.box.addEventListener('change', () => {
      if (!whole.box.checked) for (const k of kinds) k.box.checked = false;
      follow();
    });
    follow();
    return {
      node: h('fieldset', { class: 'events' }, h('legend', {}, FAMILY_NAMES[family] ?? family), whole.item, h('div', { class: 'checks' }, kinds.map((k) => k.item))),
      chosen: () => (whole.box.checked ? [`${family}.*`] : kinds.filter((k) => k.box.checked).map((k) => k.type)),
    };
  });
  const kept = others.map((pattern, i) => ({ pattern, ...check(`${prefix}-other-${i}`, h('code', {}, pattern), { checked: true }) }));
  return {
    node: h('fieldset', { class: 'plain' },
      h('legend', { class: 'field-legend' }, 'Event kinds'),
      kept.length ? h('fieldset', {}, h('legend', {}, 'Families kept from the rule'), kept.map((k) => k.item)) : null,
      pickers.map((p) => p.node)),
    chosen: () => [...pickers.flatMap((p) => p.chosen()), ...kept.filter((k) => k.box.checked).map((k) => k.pattern)],
  };
}

/** A set of checkboxes in a fieldset: `items` as `{ value, label }`. */
function checkList(prefix, legend, items, chosen, hint) {
  const boxes = items.map((item) => ({ value: item.value, ...check(`${prefix}-${item.value}`, item.label, { checked: chosen.includes(item.value) }) }));
  return {
    node: h('fieldset', {}, h('legend', {}, legend), hint ? h('small', { class: 'hint' }, hint) : null,
      items.length ? h('div', { class: 'checks pick-list' }, boxes.map((b) => b.item)) : h('p', { class: 'empty' }, 'None to choose from.')),
    chosen: () => boxes.filter((b) => b.box.checked).map((b) => b.value),
  };
}

/** Radios choosing between parts of a form, each part shown only while its radio is chosen. */
function choice(prefix, legend, options, current) {
  const name = `${prefix}-${legend.toLowerCase().replaceAll(' ', '-')}`;
  const radios = options.map((o) => ({ ...o, ...radio(`${name}-${o.value}`, name, o.value, o.label, o.value === current) }));
  const show = () => { for (const r of radios) if (r.part) r.part.hidden = !r.button.checked; };
  for (const r of radios) r.button.addEventListener('change', show);
  show();
  return {
    node: h('fieldset', {}, h('legend', {}, legend), radios.flatMap((r) => [r.item, r.part ?? null])),
    value: () => radios.find((r) => r.button.checked)?.value,
  };
}

const INTERVAL_UNITS = [['seconds', 1], ['minutes', 60], ['hours', 3600]];

/** Minimum interval as a number and a unit, in the largest unit that divides it. */
function intervalField(prefix, seconds) {
  const [unit, size] = [...INTERVAL_UNITS].reverse().find(([, s]) => seconds % s === 0 && seconds > 0) ?? ['minutes', 60];
  const amount = h('input', { type: 'number', id: `${prefix}-interval`, min: '0', step: '1', required: true, value: String(seconds / size), 'aria-describedby': `${prefix}-interval-hint` });
  const units = h('select', { 'aria-label': 'Unit of the minimum interval' }, INTERVAL_UNITS.map(([name]) => h('option', { value: name, selected: name === unit }, name)));
  const node = h('div', { class: 'field' },
    h('label', { for: amount.id }, 'Minimum interval per vehicle'),
    h('div', { class: 'actions' }, amount, units),
    h('small', { id: `${prefix}-interval-hint`, class: 'hint' }, 'After a notification about a vehicle, the rule stays silent about that vehicle this long. 0: every event.'));
  return { node, seconds: () => Math.round(Number(amount.value || 0) * Object.fromEntries(INTERVAL_UNITS)[units.value]) };
}

/** Days of the week and the hours, with shortcuts; `any time` hides them. */
function scheduleField(prefix, schedule) {
  const days = DAY_NAMES.map((name, i) => ({ day: i + 1, ...check(`${prefix}-day-${i + 1}`, name, { checked: schedule ? schedule.days.includes(i + 1) : i < 5 }) }));
  const from = h('input', { type: 'time', value: schedule?.from ?? '08:00', required: true });
  const to = h('input', { type: 'time', value: schedule?.to ?? '18:00', required: true });
  const set = (dayList, f, t) => { for (const d of days) d.box.checked = dayList.includes(d.day); from.value = f; to.value = t; };
  const part = h('div', { class: 'schedule' },
    h('fieldset', {}, h('legend', {}, 'Days'), h('div', { class: 'checks days' }, days.map((d) => d.item))),
    h('div', { class: 'inline-form' }, field('From', from), field('To', to)),
    h('small', { class: 'hint' }, 'A "to" earlier than "from" runs past midnight: 20:00 to 06:00 is the night. The same time in both: the whole day.'),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => set([1, 2, 3, 4, 5, 6, 7], '20:00', '06:00') }, 'Nights'),
      h('button', { type: 'button', onclick: () => set([1, 2, 3, 4, 5], '08:00', '18:00') }, 'Working hours'),
      h('button', { type: 'button', onclick: () => set([6, 7], '00:00', '00:00') }, 'Weekends')));
  const picked = choice(prefix, 'When', [
    { value: 'any', label: 'Any time' },
    { value: 'schedule', label: 'Only on these days and hours', part },
  ], schedule ? 'schedule' : 'any');
  return {
    node: picked.node,
    schedule: () => (picked.value() === 'any' ? null : { days: days.filter((d) => d.box.checked).map((d) => d.day), from: from.value, to: to.value }),
  };
}

/** Who gets it on which channel: one fieldset per user the form may offer; recipients it cannot show are kept. */
function recipientsField(prefix, users, recipients) {
  const shown = new Set(users.map((u) => u.id));
  const kept = recipients.filter((r) => !shown.has(r.userId));
  const rows = users.map((user) => {
    const had = recipients.find((r) => r.userId === user.id)?.channels ?? [];
    const boxes = Object.entries(CHANNEL_NAMES).map(([channel, label]) => ({ channel, ...check(`${prefix}-user-${user.id}-${channel}`, label, { checked: had.includes(channel) }) }));
    return {
      node: h('fieldset', { class: 'recipient' }, h('legend', {}, user.name ? `${user.name} (${user.email})` : user.email), h('div', { class: 'checks channels' }, boxes.map((b) => b.item))),
      recipient: () => ({ userId: user.id, channels: boxes.filter((b) => b.box.checked).map((b) => b.channel) }),
    };
  });
  return {
    node: h('fieldset', { class: 'plain' }, h('legend', { class: 'field-legend' }, 'Recipients'),
      h('small', { class: 'hint' }, 'Each person gets it on the channels ticked, at the addresses they set in My notifications; a channel they have no address for (no phone, no Telegram chat, no browser subscribed) sends them nothing, and the rule\'s deliveries say so.'),
      rows.map((r) => r.node),
      kept.length ? h('p', { class: 'hint' }, `Also kept as they are: ${kept.map((r) => `${r.name ?? r.email ?? `user ${r.userId}`} (${r.channels.map((c) => CHANNEL_NAMES[c] ?? c).join(', ')})`).join('; ')}.`) : null),
    recipients: () => [...rows.map((r) => r.recipient()).filter((r) => r.channels.length > 0), ...kept.map((r) => ({ userId: r.userId, channels: r.channels }))],
  };
}

/**
 * The form of a new rule or of one being changed. `choices`: `{ users, groups, vehicles, geofences,
 * timezone }`, each list null when the session may not read it (that way of choosing is not offered).
 * `save(body)` sends it; its error is shown beside the buttons, in the API's words.
 */
export function ruleForm({ title, rule, submitLabel, save, cancel, choices }) {
  const prefix = `rule-${++forms}`;
  const name = h('input', { type: 'text', required: true, maxlength: '200', value: rule?.name ?? '', autocomplete: 'off' });
  const events = eventPicker(prefix, rule?.events ?? []);
  const scope = rule?.vehicles ?? { scope: 'all' };
  const groups = choices.groups ? checkList(`${prefix}-group`, 'Which groups', choices.groups.map((g) => ({ value: g.id, label: g.name })), scope.groupIds ?? []) : null;
  const vehicles = choices.vehicles ? checkList(`${prefix}-vehicle`, 'Which vehicles', choices.vehicles.map((v) => ({ value: v.id, label: `${v.name} (${v.id})` })), scope.vehicleIds ?? []) : null;
  const vehicleScope = choice(prefix, 'Vehicles', [
    { value: 'all', label: 'All vehicles' },
    ...(groups || scope.scope === 'groups' ? [{ value: 'groups', label: 'The vehicles of some groups', part: groups?.node ?? h('p', { class: 'hint' }, `Groups ${scope.groupIds?.join(', ')} (kept: your role does not list groups)`) }] : []),
    ...(vehicles || scope.scope === 'list' ? [{ value: 'list', label: 'Chosen vehicles', part: vehicles?.node ?? h('p', { class: 'hint' }, `${scope.vehicleIds?.length} vehicle(s) (kept)`) }] : []),
  ], scope.scope);
  const geofences = choices.geofences ? checkList(`${prefix}-geofence`, 'Which geofences', choices.geofences.map((g) => ({ value: g.id, label: g.name })), rule?.geofenceIds ?? []) : null;
  const geofenceScope = geofences || rule?.geofenceIds ? choice(prefix, 'Geofences', [
    { value: 'any', label: 'Any geofence' },
    { value: 'some', label: 'Only these geofences', part: geofences?.node ?? h('p', { class: 'hint' }, `${rule.geofenceIds.length} geofence(s) (kept)`) },
  ], rule?.geofenceIds ? 'some' : 'any') : null;
  const schedule = scheduleField(prefix, rule?.schedule ?? null);
  const timezone = h('input', { type: 'text', required: true, value: rule?.timezone ?? choices.timezone, autocomplete: 'off', spellcheck: 'false' });
  const interval = intervalField(prefix, rule?.minIntervalSeconds ?? 0);
  const recipients = recipientsField(prefix, choices.users, rule?.recipients ?? []);
  const enabled = check(`${prefix}-enabled`, 'Enabled', { checked: rule?.enabled ?? true });
  const error = errorLine();

  const body = () => {
    const chosenScope = vehicleScope.value();
    return {
      name: name.value.trim(),
      events: events.chosen(),
      vehicles: chosenScope === 'groups' ? { scope: 'groups', groupIds: groups ? groups.chosen() : scope.groupIds }
        : chosenScope === 'list' ? { scope: 'list', vehicleIds: vehicles ? vehicles.chosen() : scope.vehicleIds }
          : { scope: 'all' },
      geofenceIds: geofenceScope?.value() === 'some' ? (geofences ? geofences.chosen() : rule.geofenceIds) : null,
      schedule: schedule.schedule(),
      timezone: timezone.value.trim(),
      minIntervalSeconds: interval.seconds(),
      recipients: recipients.recipients(),
      enabled: enabled.box.checked,
    };
  };

  return h('form', { class: 'form card rule-form', 'aria-label': title, onsubmit: async (event) => {
    event.preventDefault();
    error.clear();
    const sent = body();
    if (sent.events.length === 0) { error.show('Choose at least one event kind.'); return; }
    if (sent.recipients.length === 0) { error.show('Tick at least one channel for at least one recipient.'); return; }
    try { await save(sent); } catch (failure) { error.show(problemText(failure)); }
  } },
  cancel ? h('h2', {}, title) : null,
  field('Name', name),
  events.node,
  vehicleScope.node,
  geofenceScope ? [geofenceScope.node, h('small', { class: 'hint' }, 'Geofences narrow only the kinds that concern one (entering, leaving).')] : null,
  schedule.node,
  field('Time zone', timezone, 'The schedule\'s days and hours are read in this IANA time zone.'),
  interval.node,
  recipients.node,
  enabled.item,
  error.node,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, submitLabel), cancel ? h('button', { type: 'button', onclick: cancel }, 'Cancel') : null));
}
