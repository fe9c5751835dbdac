// The Vehicles page's forms: register a tracker, and change one vehicle (its groups included).
import { problemText } from './console-api.js';
import { errorLine, field, h, notify } from './dom.js';
import { listFromPage } from './page-data.js';

/** The protocols the API takes, `current` chosen. */
function protocolSelect(current) {
  return h('select', {},
    h('option', { value: '', selected: !current }, 'Not given'),
    listFromPage('protocols').map((p) => h('option', { value: p, selected: p === current }, p)));
}

/** The form that registers a tracker (folded until opened); `added` runs after each. */
export function addTrackerForm(api, added) {
  const imei = h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '32', pattern: '[0-9A-Za-z._\\-]{1,32}' });
  const protocol = protocolSelect('teltonika');
  const name = h('input', { type: 'text', required: true, maxlength: '200' });
  const plates = h('input', { type: 'text', maxlength: '40' });
  const failure = errorLine();
  return h('details', { class: 'card' },
    h('summary', {}, 'Add a tracker'),
    h('form', { class: 'form', onsubmit: async (event) => {
      event.preventDefault();
      failure.clear();
      try {
        const body = { imei: imei.value.trim(), name: name.value, plates: plates.value.trim(), protocol: protocol.value || null };
        const { data } = await api.post('/vehicles', body);
        notify(`${data.name} added`);
        imei.value = ''; name.value = ''; plates.value = '';
        await added();
      } catch (error) {
        failure.show(problemText(error));
      }
    } },
    field('IMEI', imei, 'The identifier the tracker logs in with: 1 to 32 letters, digits, dots, dashes or underscores.'),
    field('Protocol', protocol),
    field('Name', name, 'Unique in the fleet; travels name vehicles by it.'),
    field('Plates', plates),
    failure.node,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add tracker'))));
}

/**
 * The form that changes a vehicle's name, plates and protocol and, given the account's `groups`
 * (for a session that may change them; none otherwise), which of them hold it. `saved` runs after.
 */
export function vehicleEditForm(api, vehicle, groups, { saved, close }) {
  const name = h('input', { type: 'text', required: true, maxlength: '200', value: vehicle.name });
  const plates = h('input', { type: 'text', maxlength: '40', value: vehicle.plates ?? '' });
  const protocol = protocolSelect(vehicle.protocol);
  const held = new Set((vehicle.groups ?? []).map((g) => g.id));
  const boxes = groups.map((g) => ({ group: g, box: h('input', { type: 'checkbox', checked: held.has(g.id) }) }));
  const failure = errorLine();
  return h('form', { class: 'form card', 'aria-labelledby': 'edit-vehicle-title', onsubmit: async (event) => {
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
      await saved();
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
    h('button', { type: 'button', onclick: close }, 'Close')));
}
