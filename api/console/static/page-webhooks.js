// Webhooks: the signed-in user's webhooks, a new one (its signing secret shown once), changing,
// enabling, disabling, testing and deleting one, and a webhook's delivery log with retries
// (`#/webhooks/<id>` opens it).
import { EVENT_TYPES, OPT_IN_EVENT_TYPES } from './catalogs.js';
import { problemText } from './console-api.js';
import { disclosure } from './disclosure.js';
import { confirmDialog, errorLine, field, h, notify, secretBox, table, when } from './dom.js';

let pickers = 0;

/** The event types as checkboxes: `*` (every type but the opt-in ones) and each type. */
function eventPicker(chosen = []) {
  const id = `events-${++pickers}`;
  const star = h('input', { type: 'checkbox', id: `${id}-all`, checked: chosen.includes('*') });
  const boxes = EVENT_TYPES.map((type) => {
    const box = h('input', { type: 'checkbox', id: `${id}-${type}`, value: type, checked: chosen.includes(type) });
    const optIn = OPT_IN_EVENT_TYPES.has(type);
    return { box, type, optIn, item: h('div', { class: 'check' }, box, ' ', h('label', { for: box.id }, h('code', {}, type)), optIn ? [' ', h('span', { class: 'badge' }, 'opt-in: only when ticked')] : null) };
  });
  // Patterns the API took that are not plain types (a family such as `vehicle.geofence.*`) stay as they are.
  const others = chosen.filter((p) => p !== '*' && !EVENT_TYPES.includes(p));
  const follow = () => {
    for (const b of boxes) if (!b.optIn) { b.box.disabled = star.checked; if (star.checked) b.box.checked = true; }
  };
  star.addEventListener('change', () => {
    if (!star.checked) for (const b of boxes) if (!b.optIn) b.box.checked = false;
    follow();
  });
  follow();
  return {
    node: h('fieldset', { class: 'events' },
      h('legend', {}, 'Event types'),
      h('div', { class: 'check all' }, star, ' ', h('label', { for: star.id }, h('code', {}, '*'), ' every event type (vehicle.position only when ticked as well: it comes in batches, often)')),
      others.length ? h('p', { class: 'hint' }, 'Also kept: ', others.map((o) => h('code', {}, o))) : null,
      h('div', { class: 'checks' }, boxes.map((b) => b.item))),
    chosen: () => [...(star.checked ? ['*'] : []), ...boxes.filter((b) => b.box.checked && (!star.checked || b.optIn)).map((b) => b.type), ...others],
  };
}

/** The form of a new webhook or of one being changed; `save(body)` answers what to show next. */
function webhookForm({ title, webhook, submitLabel, save, cancel }) {
  const url = h('input', { type: 'url', required: true, value: webhook?.url ?? '', placeholder: 'https://example.com/hooks/fleet', autocomplete: 'off' });
  const description = h('input', { type: 'text', maxlength: '500', value: webhook?.description ?? '' });
  const events = eventPicker(webhook?.events ?? []);
  const error = errorLine();
  return h('form', { class: 'form card', 'aria-label': title, onsubmit: async (event) => {
    event.preventDefault();
    error.clear();
    const body = { url: url.value.trim(), events: events.chosen(), description: description.value.trim() || null };
    if (body.events.length === 0) { error.show('Choose at least one event type.'); return; }
    try { await save(body); } catch (failure) { error.show(problemText(failure)); }
  } },
  cancel ? h('h2', {}, title) : null,
  field('URL', url, 'Where the events are POSTed, signed (Standard Webhooks). HTTPS unless the server allows otherwise.'),
  field('Description', description),
  events.node,
  error.node,
  h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, submitLabel), cancel ? h('button', { type: 'button', onclick: cancel }, 'Cancel') : null));
}

const status = (w) => (w.enabled ? h('span', { class: 'badge ok' }, 'enabled') : h('span', { class: 'badge bad' }, `disabled${w.disabledReason ? `: ${w.disabledReason}` : ''}`));
const deliveryStatus = (d) => h('span', { class: `badge ${d.status === 'succeeded' ? 'ok' : d.status === 'failed' ? 'bad' : ''}` }, d.status);

export async function render(main, { api, can, rest, navigate }) {
  const writer = can('webhooks:write');
  const secretSlot = h('div');
  const editSlot = h('div');
  const listError = errorLine();
  const list = h('div');
  const deliveries = h('section', { 'aria-label': 'Delivery log' });
  main.append(h('p', { class: 'intro' }, 'Webhooks POST each event to your URL as it happens, signed with the webhook\'s secret, and retry for a day while it fails.'), secretSlot);
  const createHolder = h('div');
  const create = disclosure('Register a webhook', createHolder);
  const newForm = () => createHolder.replaceChildren(webhookForm({
    title: 'Register a webhook', submitLabel: 'Register webhook',
    save: async (body) => {
      const { data } = await api.post('/webhooks', body);
      secretSlot.replaceChildren(secretBox(`The signing secret of the webhook to ${data.url}.`, data.secret));
      secretSlot.querySelector('input')?.focus();
      newForm();
      create.close();
      await draw();
    },
  }));
  if (writer) {
    newForm();
    main.append(create.node);
  }
  main.append(h('h2', {}, 'Your webhooks'), listError.node, editSlot, list, deliveries);

  const act = async (work, done) => {
    listError.clear();
    try { await work(); if (done) notify(done); await draw(); } catch (failure) { listError.show(problemText(failure)); }
  };

  function edit(webhook) {
    editSlot.replaceChildren(webhookForm({
      title: `Change the webhook to ${webhook.url}`, webhook, submitLabel: 'Save',
      save: async (body) => { await api.patch(`/webhooks/${webhook.id}`, body); editSlot.replaceChildren(); notify('Webhook saved'); await draw(); },
      cancel: () => editSlot.replaceChildren(),
    }));
    editSlot.querySelector('input')?.focus();
  }

  async function remove(webhook) {
    const sure = await confirmDialog({ title: 'Delete this webhook?', body: `${webhook.url} receives no more events, and its delivery log is deleted.`, confirmLabel: 'Delete', danger: true });
    if (!sure) return;
    await act(() => api.delete(`/webhooks/${webhook.id}`), 'Webhook deleted');
    if (rest === String(webhook.id)) navigate('/webhooks');
  }

  async function rotate(webhook) {
    const sure = await confirmDialog({
      title: 'A new signing secret?',
      body: 'Deliveries are signed with both the old and the new secret for 24 hours, so your receiver can switch over; then only with the new one.',
      confirmLabel: 'Make new secret',
    });
    if (!sure) return;
    await act(async () => {
      const { data } = await api.post(`/webhooks/${webhook.id}/rotate-secret`);
      secretSlot.replaceChildren(secretBox(`The new signing secret of the webhook to ${data.url}.`, data.secret));
      secretSlot.querySelector('input')?.focus();
    }, 'New secret made');
  }

  function actions(w) {
    const buttons = [h('a', { href: `#/webhooks/${w.id}`, class: 'button-link' }, 'Deliveries')];
    if (writer) {
      buttons.push(
        h('button', { type: 'button', onclick: () => edit(w) }, 'Edit'),
        w.enabled
          ? h('button', { type: 'button', onclick: () => act(() => api.patch(`/webhooks/${w.id}`, { enabled: false }), 'Webhook disabled') }, 'Disable')
          : h('button', { type: 'button', onclick: () => act(() => api.patch(`/webhooks/${w.id}`, { enabled: true }), 'Webhook enabled') }, 'Enable'),
        h('button', { type: 'button', disabled: !w.enabled, onclick: () => act(() => api.post(`/webhooks/${w.id}/test`), 'Test event queued') }, 'Send test'),
        h('button', { type: 'button', onclick: () => rotate(w) }, 'New secret'),
        h('button', { type: 'button', class: 'danger', onclick: () => remove(w) }, 'Delete'));
    }
    return h('div', { class: 'actions' }, buttons);
  }

  let webhooks = [];
  async function draw() {
    webhooks = await api.all('/webhooks');
    list.replaceChildren(table('Your webhooks', [
      { label: 'URL', cell: (w) => h('code', {}, w.url) },
      { label: 'Events', cell: (w) => h('span', { class: 'codes' }, w.events.map((e) => h('code', {}, e))) },
      { label: 'Description', cell: (w) => w.description ?? '—' },
      { label: 'State', cell: status },
      { label: 'Created', cell: (w) => when(w.createdAt) },
      { label: '', cell: actions },
    ], webhooks, 'No webhooks yet.'));
    const shown = webhooks.find((w) => String(w.id) === rest);
    if (shown) await drawDeliveries(shown);
    else deliveries.replaceChildren(rest ? h('p', { class: 'error', role: 'alert' }, `There is no webhook ${rest} of yours.`) : '');
  }

  /** The attempts of one delivery, read when its details are first opened. */
  function attemptLog(webhook, delivery) {
    const list = h('ol', { class: 'attempts' });
    const details = h('details', { class: 'attempt-log' }, h('summary', {}, String(delivery.attempts)), list);
    let read = false;
    details.addEventListener('toggle', async () => {
      if (!details.open || read) return;
      read = true;
      try {
        const { data } = await api.get(`/webhooks/${webhook.id}/deliveries/${delivery.id}`);
        list.replaceChildren(...data.attemptLog.map((a) => h('li', {},
          `${when(a.attemptedAt)}: ${a.statusCode ?? a.error ?? 'no answer'}, ${a.durationMs} ms`)));
        if (data.attemptLog.length === 0) list.replaceChildren(h('li', {}, 'No attempt yet.'));
      } catch (failure) {
        read = false;
        list.replaceChildren(h('li', { class: 'error' }, problemText(failure)));
      }
    });
    return details;
  }

  /** The webhook's delivery log, newest first, 50 at a time. */
  async function drawDeliveries(webhook) {
    const body = h('div');
    const more = h('button', { type: 'button', hidden: true }, 'Older deliveries');
    const rows = [];
    let cursor = null;
    const retry = (d) => (writer && d.status !== 'succeeded'
      ? h('button', { type: 'button', onclick: () => act(() => api.post(`/webhooks/${webhook.id}/deliveries/${d.id}/retry`), 'Retry queued') }, 'Retry')
      : null);
    const load = async () => {
      const page = await api.get(`/webhooks/${webhook.id}/deliveries?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      rows.push(...page.data);
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
      body.replaceChildren(table(`Deliveries to ${webhook.url}`, [
        { label: 'Event', cell: (d) => h('code', {}, d.eventType) },
        { label: 'Status', cell: deliveryStatus },
        { label: 'Attempts', cell: (d) => (d.attempts > 0 ? attemptLog(webhook, d) : '0') },
        { label: 'Response', cell: (d) => (d.lastStatusCode === null ? (d.lastError ?? '—') : String(d.lastStatusCode)) },
        { label: 'Last attempt', cell: (d) => when(d.lastAttemptAt) },
        { label: 'Next attempt', cell: (d) => when(d.nextAttemptAt) },
        { label: 'Created', cell: (d) => when(d.createdAt) },
        { label: '', cell: retry },
      ], rows, 'No deliveries yet.'));
    };
    more.addEventListener('click', () => load().catch((e) => listError.show(problemText(e))));
    await load();
    deliveries.replaceChildren(
      h('h2', {}, `Deliveries to ${webhook.url}`),
      h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => drawDeliveries(webhook).catch((e) => listError.show(problemText(e))) }, 'Refresh'), h('a', { href: '#/webhooks' }, 'Close')),
      body,
      h('div', { class: 'actions' }, more));
  }

  await draw();
}
