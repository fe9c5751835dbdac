// Vehicles: the fleet's trackers with their protocol, plates, status and groups; register a tracker,
// change its name, plates and protocol, put it in or take it out of vehicle groups, delete it.
import { problemText } from './console-api.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';
import { listFromPage } from './page-data.js';

/** Reads each vehicle's detail (plates, protocol, groups) of a page, a few at a time. */
async function details(api, list) {
  const out = new Array(list.length);
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const i = next++;
      out[i] = await api.get(`/vehicles/${encodeURIComponent(list[i].id)}`).then((a) => a.data, () => ({ ...list[i], unreadable: true }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(6, list.length) }, worker));
  return out;
}

function protocolSelect(current) {
  return h('select', {},
    h('option', { value: '', selected: !current }, 'Not given'),
    listFromPage('protocols').map((p) => h('option', { value: p, selected: p === current }, p)));
}

export async function render(main, { api, can }) {
  const write = can('vehicles:write');
  const manageGroups = can('users:write');
  const listArea = h('div', { class: 'vehicle-list' });
  const editArea = h('div');
  let groups = [];

  if (write) {
    const imei = h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '32', pattern: '[0-9A-Za-z._\\-]{1,32}' });
    const protocol = protocolSelect('teltonika');
    const name = h('input', { type: 'text', required: true, maxlength: '200' });
    const plates = h('input', { type: 'text', maxlength: '40' });
    const failure = errorLine();
    main.append(h('details', { class: 'card' },
      h('summary', {}, 'Add a tracker'),
      h('form', { class: 'form', onsubmit: async (event) => {
        event.preventDefault();
        failure.clear();
        try {
          const body = { imei: imei.value.trim(), name: name.value, plates: plates.value.trim(), protocol: protocol.value || null };
          const { data } = await api.post('/vehicles', body);
          notify(`${data.name} added`);
          imei.value = ''; name.value = ''; plates.value = '';
          await drawList();
        } catch (error) {
          failure.show(problemText(error));
        }
      } },
      field('IMEI', imei, 'The identifier the tracker logs in with: 1 to 32 letters, digits, dots, dashes or underscores.'),
      field('Protocol', protocol),
      field('Name', name, 'Unique in the fleet; travels name vehicles by it.'),
      field('Plates', plates),
      failure.node,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add tracker')))));
  }
  // A page of vehicles at a time (the API's own pages), found by name or plates.
  const PAGE_SIZE = 50;
  const search = h('input', { type: 'search', maxlength: '100', autocomplete: 'off' });
  const pager = h('div', { class: 'actions pager' });
  /** The cursors of the pages before this one, and this one's. */
  const cursors = [];
  let cursor;
  main.append(h('h2', {}, 'The fleet'),
    h('form', { class: 'inline-form', role: 'search', onsubmit: (event) => {
      event.preventDefault();
      cursors.length = 0;
      cursor = undefined;
      listArea.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));
      void drawList();
    } }, field('Name or plates', search), h('button', { type: 'submit' }, 'Find')),
    listArea, pager, editArea);

  function editForm(vehicle) {
    const name = h('input', { type: 'text', required: true, maxlength: '200', value: vehicle.name });
    const plates = h('input', { type: 'text', maxlength: '40', value: vehicle.plates ?? '' });
    const protocol = protocolSelect(vehicle.protocol);
    const held = new Set((vehicle.groups ?? []).map((g) => g.id));
    const boxes = manageGroups ? groups.map((g) => ({ group: g, box: h('input', { type: 'checkbox', checked: held.has(g.id) }) })) : [];
    const failure = errorLine();
    const form = h('form', { class: 'form card', 'aria-labelledby': 'edit-vehicle-title', onsubmit: async (event) => {
      event.preventDefault();
      failure.clear();
      try {
        await api.patch(`/vehicles/${encodeURIComponent(vehicle.id)}`, { name: name.value, plates: plates.value.trim(), protocol: protocol.value || null });
        for (const { group, box } of boxes) {
          if (box.checked === held.has(group.id)) continue;
          // A group's vehicles are replaced whole: read the list as it is now, then add or take out this one.
          const { data } = await api.get(`/groups/${group.id}`);
          const ids = data.vehicle_ids.filter((id) => id !== vehicle.id);
          if (box.checked) ids.push(vehicle.id);
          await api.patch(`/groups/${group.id}`, { vehicle_ids: ids });
        }
        notify(`${name.value.trim()} saved`);
        editArea.replaceChildren();
        await drawList();
      } catch (error) {
        failure.show(problemText(error));
      }
    } },
    h('h3', { id: 'edit-vehicle-title' }, `Edit ${vehicle.name} (${vehicle.id})`),
    field('Name', name), field('Plates', plates), field('Protocol', protocol),
    boxes.length > 0 ? h('fieldset', {}, h('legend', {}, 'Vehicle groups'), h('div', { class: 'checks' },
      boxes.map(({ group, box }) => h('label', {}, box, ` ${group.name}`)))) : null,
    failure.node,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Save'),
      h('button', { type: 'button', onclick: () => editArea.replaceChildren() }, 'Close')));
    editArea.replaceChildren(form);
    name.focus();
  }

  async function remove(vehicle) {
    const sure = await confirmDialog({
      title: `Delete ${vehicle.name}?`,
      body: `The vehicle ${vehicle.name} (IMEI ${vehicle.id}) and everything recorded for it (positions, trips, travels) are deleted. The event log keeps its events.`,
      confirmLabel: 'Delete vehicle', danger: true,
    });
    if (!sure) return;
    try {
      await api.delete(`/vehicles/${encodeURIComponent(vehicle.id)}`);
      notify(`${vehicle.name} deleted`);
      editArea.replaceChildren();
      await drawList();
    } catch (error) {
      notify(problemText(error));
    }
  }

  /** Only the latest read draws: a slower earlier one (before a search, say) must not draw over it. */
  let reads = 0;
  async function drawList() {
    const read = ++reads;
    // The buttons of the page shown hold its cursor, made with its search: gone until this read is drawn.
    pager.replaceChildren();
    let vehicles;
    let page;
    try {
      const q = search.value.trim();
      page = await api.get(`/vehicles?limit=${PAGE_SIZE}${q ? `&q=${encodeURIComponent(q)}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      vehicles = await details(api, page.data);
      if (can('users:read')) groups = (await api.get('/groups')).data;
    } catch (error) {
      if (read !== reads) return;
      listArea.replaceChildren(h('p', { class: 'error', role: 'alert' }, problemText(error)));
      return;
    }
    if (read !== reads) return;
    listArea.replaceChildren(table('Vehicles', [
      { label: 'Name', cell: (v) => v.name },
      { label: 'IMEI', cell: (v) => h('code', {}, v.id) },
      { label: 'Protocol', cell: (v) => v.protocol ?? '—' },
      { label: 'Plates', cell: (v) => v.plates || '—' },
      { label: 'Status', cell: (v) => h('span', { class: `badge status-${v.status}` }, v.status) },
      { label: 'Groups', cell: (v) => (v.groups?.length ? v.groups.map((g) => g.name).join(', ') : '—') },
      write ? { label: 'Actions', cell: (v) => h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `Edit ${v.name}`, onclick: () => editForm(v) }, 'Edit'),
        h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${v.name}`, onclick: () => remove(v) }, 'Delete')) } : null,
    ].filter(Boolean), vehicles, search.value.trim() ? 'No vehicle has this name or plates.' : 'No vehicles yet.'));
    pager.replaceChildren(...[
      cursors.length > 0 ? h('button', { type: 'button', onclick: () => { cursor = cursors.pop(); void drawList(); } }, 'Previous') : null,
      page.has_more ? h('button', { type: 'button', onclick: () => { cursors.push(cursor); cursor = page.next_cursor; void drawList(); } }, 'Next') : null,
    ].filter(Boolean));
  }
  await drawList();
}
