// Vehicles: the fleet's trackers with their protocol, plates, status and groups; register a tracker,
// change its name, plates and protocol, put it in or take it out of vehicle groups, delete it.
import { problemText } from './console-api.js';
import { confirmDialog, field, h, notify, table } from './dom.js';
import { addTrackerForm, vehicleEditForm } from './vehicle-forms.js';

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

export async function render(main, { api, can }) {
  const write = can('vehicles:write');
  const manageGroups = can('users:write');
  const listArea = h('div', { class: 'vehicle-list' });
  const editArea = h('div');
  let groups = [];

  if (write) main.append(addTrackerForm(api, () => drawList()));
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
    editArea.replaceChildren(vehicleEditForm(api, vehicle, manageGroups ? groups : [], {
      async saved() {
        editArea.replaceChildren();
        await drawList();
      },
      close: () => editArea.replaceChildren(),
    }));
    editArea.querySelector('input').focus();
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
