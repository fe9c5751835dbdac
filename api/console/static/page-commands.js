// Commands: what was sent to the trackers, newest first, a page at a time; send one (an engine cut-off
// only after a confirmation naming the vehicle and its current speed; the server's safe-stop rule
// still decides when it goes out); cancel one that is still queued.
import { problemText } from './console-api.js';
import { confirmDialog, errorLine, field, h, notify, table, when } from './dom.js';
import { listFromPage } from './page-data.js';

const PAGE_SIZE = 25;
const REFRESH_MS = 10_000;
const LABELS = {
  engine_stop: 'Cut off the engine', engine_resume: 'Restore the engine', siren_on: 'Siren on', siren_off: 'Siren off',
  take_photo: 'Take a photo', custom: 'Custom text (the tracker\'s own command)',
};
const OPEN = new Set(['queued']);

/** The sentence the cut-off confirmation shows: the vehicle's name and its speed now. */
function movementText(status) {
  if (status.speedKmh === null || status.latitude === null) return `Its speed is not known (status ${status.status}).`;
  return status.status === 'Moving' ? `It is moving at ${status.speedKmh} km/h.` : `It is ${status.status.toLowerCase()} (${status.speedKmh} km/h).`;
}

export async function render(main, { api, can }) {
  const write = can('commands:write');
  const vehicles = await api.all('/vehicles');
  const names = new Map(vehicles.map((v) => [v.id, v.name]));
  const listArea = h('div');
  const pager = h('div', { class: 'actions pager' });
  /** The cursors of the pages before this one, and this one's. */
  const cursors = [];
  let cursor;

  if (write) {
    const vehicle = h('select', { required: true }, vehicles.map((v) => h('option', { value: v.id }, `${v.name} (${v.id})`)));
    const types = listFromPage('commandTypes').filter((t) => t !== 'custom' || can('commands:custom'));
    const type = h('select', { required: true }, types.map((t) => h('option', { value: t }, LABELS[t] ?? t)));
    const text = h('input', { type: 'text', maxlength: '1000', spellcheck: 'false' });
    const textField = field('Text', text, 'Sent to the tracker as written.');
    const showText = () => { textField.hidden = type.value !== 'custom'; text.required = type.value === 'custom'; };
    type.addEventListener('change', showText);
    showText();
    const failure = errorLine();
    main.append(h('form', { class: 'form card', 'aria-labelledby': 'send-title', onsubmit: async (event) => {
      event.preventDefault();
      failure.clear();
      const name = names.get(vehicle.value) ?? vehicle.value;
      try {
        if (type.value === 'engine_stop') {
          const { data: status } = await api.get(`/devices/${encodeURIComponent(vehicle.value)}/status`);
          const sure = await confirmDialog({
            title: 'Cut off the engine?',
            body: [h('p', {}, `Cut off the engine of ${name}? ${movementText(status)}`),
              h('p', {}, 'The server sends it only once a current fix shows the vehicle slow enough; until then it waits, queued.')],
            confirmLabel: 'Cut off the engine', danger: true,
          });
          if (!sure) return;
        }
        const body = { deviceId: vehicle.value, type: type.value, idempotencyKey: crypto.randomUUID(), ...(type.value === 'custom' ? { text: text.value } : {}) };
        const { data } = await api.post('/commands', body);
        notify(`Command ${data.id} to ${name}: ${data.status}${data.reason ? `, ${data.reason}` : ''}`);
        text.value = '';
        cursors.length = 0;
        cursor = undefined;
        await drawList();
      } catch (error) {
        failure.show(problemText(error));
      }
    } },
    h('h2', { id: 'send-title' }, 'Send a command'),
    field('Vehicle', vehicle), field('Command', type), textField, failure.node,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Send command'))));
  }
  main.append(h('h2', {}, 'Sent commands'), listArea, pager);

  async function cancel(command) {
    const name = names.get(command.deviceId) ?? command.deviceId;
    const sure = await confirmDialog({ title: `Cancel command ${command.id}?`, body: `${LABELS[command.type] ?? command.type} for ${name} is not sent.`, confirmLabel: 'Cancel command', danger: true });
    if (!sure) return;
    try {
      const { data } = await api.delete(`/commands/${command.id}`);
      notify(`Command ${data.id}: ${data.status}`);
    } catch (error) {
      notify(problemText(error));
    }
    await drawList();
  }

  /** The page last drawn: a refresh that reads the same draws nothing (the reader's focus stays). */
  let drawn;
  /** Only the latest read draws: a refresh that was under way must not draw over a newer page. */
  let reads = 0;
  async function drawList() {
    const read = ++reads;
    let page;
    try {
      page = await api.get(`/commands?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    } catch (error) {
      if (read !== reads) return;
      drawn = undefined;
      listArea.replaceChildren(h('p', { class: 'error', role: 'alert' }, problemText(error)));
      return;
    }
    if (read !== reads) return;
    const text = JSON.stringify([cursors.length, cursor, page]);
    if (text === drawn) return;
    drawn = text;
    listArea.replaceChildren(table('Commands', [
      { label: 'Id', cell: (c) => c.id },
      { label: 'Vehicle', cell: (c) => names.get(c.deviceId) ?? c.deviceId },
      { label: 'Command', cell: (c) => (c.type === 'custom' ? h('code', {}, c.text ?? '') : LABELS[c.type] ?? c.type) },
      { label: 'State', cell: (c) => h('span', { class: `badge command-${c.status}` }, c.status) },
      { label: 'Detail', cell: (c) => c.reason ?? c.error ?? c.response ?? '' },
      { label: 'Sent by', cell: (c) => c.issuedBy?.keyName ?? (c.issuedBy?.userId ? `user ${c.issuedBy.userId}` : '—') },
      { label: 'Created', cell: (c) => when(c.createdAt) },
      write ? { label: '', cell: (c) => (OPEN.has(c.status) ? h('button', { type: 'button', 'aria-label': `Cancel command ${c.id}`, onclick: () => cancel(c) }, 'Cancel') : '') } : null,
    ].filter(Boolean), page.data, 'No commands yet.'));
    pager.replaceChildren(...[
      cursors.length > 0 ? h('button', { type: 'button', onclick: () => { cursor = cursors.pop(); void drawList(); } }, 'Newer') : null,
      page.has_more ? h('button', { type: 'button', onclick: () => { cursors.push(cursor); cursor = page.next_cursor; void drawList(); } }, 'Older') : null,
    ].filter(Boolean));
  }
  await drawList();
  const timer = setInterval(drawList, REFRESH_MS);
  return () => clearInterval(timer);
}
