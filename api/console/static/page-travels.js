// Travels: the active travels with their status and next ETA; create one (a vehicle, then geofences
// in the order it is to reach them, each with its expected arrival); follow one (its waypoints, their
// status and live ETAs, read again every 30 s while it is shown); cancel one.
import { problemText } from './console-api.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';

const REFRESH_MS = 30_000;
const pad = (n) => String(n).padStart(2, '0');

/** A datetime-local value (`2026-11-29T08:00`) as the API writes times: `29/11/2026 08:00`. */
export const apiTime = (value) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  return m ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}` : value;
};

/** Now plus `minutes`, as a datetime-local value in `timeZone` (the user's, in which the API reads times). */
function localInput(timeZone, minutes = 0) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-GB', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(new Date(Date.now() + minutes * 60_000)).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${pad(Number(parts.hour))}:${parts.minute}`;
}

const localText = (time) => (time ? time.local : '—');
const statusBadge = (status) => h('span', { class: `badge travel-${status.toLowerCase().replace(/\s+/g, '-')}` }, status);

export async function render(main, ctx) {
  if (ctx.rest) return follow(main, ctx, ctx.rest);
  const { api, can, session } = ctx;
  const write = can('travels:write');
  const listArea = h('div');
  if (write) main.append(await creationForm(ctx, () => drawList()));
  main.append(h('h2', {}, 'Active travels'), listArea);

  async function drawList() {
    try {
      const travels = (await api.get('/travels')).data;
      listArea.replaceChildren(table('Active travels', [
        { label: 'Travel', cell: (t) => h('a', { href: `#/travels/${t.travelId}` }, `Travel ${t.travelId}`) },
        { label: 'Vehicle', cell: (t) => t.vehicle },
        { label: 'Status', cell: (t) => statusBadge(t.status) },
        { label: 'Start', cell: (t) => localText(t.startTime) },
        { label: 'Progress', cell: (t) => `${t.completedWaypoints} of ${t.totalWaypoints} (${t.progress}%)` },
        { label: 'Next waypoint', cell: (t) => t.nextWaypoint ?? '—' },
        { label: 'ETA', cell: (t) => t.timing || '—' },
      ], travels, `No active travels. Times are in your time zone, ${session.user.timezone}.`));
    } catch (error) {
      listArea.replaceChildren(h('p', { class: 'error', role: 'alert' }, problemText(error)));
    }
  }
  await drawList();
  const timer = setInterval(drawList, REFRESH_MS);
  return () => clearInterval(timer);
}

/** The form that creates a travel; `created` runs after. */
async function creationForm({ api, session, navigate }, created) {
  const timeZone = session.user.timezone;
  const [vehicles, geofences] = await Promise.all([api.all('/vehicles'), api.get('/geofences').then((a) => a.data)]);
  const vehicle = h('select', { required: true }, vehicles.map((v) => h('option', { value: v.name }, v.name)));
  const start = h('input', { type: 'datetime-local', required: true, value: localInput(timeZone) });
  const rows = h('ol', { class: 'waypoint-rows' });
  const failure = errorLine();
  /** Each waypoint row's fields. */
  const fieldsOf = new WeakMap();

  function waypointRow(offsetMinutes) {
    const geofence = h('select', { required: true }, geofences.map((g) => h('option', { value: g.name }, g.name)));
    const arrival = h('input', { type: 'datetime-local', required: true, value: localInput(timeZone, offsetMinutes) });
    const row = h('li', { class: 'waypoint-row' });
    // A waypoint moves; the expected arrivals stay in place, so they keep rising down the list.
    const move = (step) => {
      const sibling = step < 0 ? row.previousElementSibling : row.nextElementSibling;
      if (!sibling) return;
      const other = fieldsOf.get(sibling).arrival;
      [arrival.value, other.value] = [other.value, arrival.value];
      if (step < 0) sibling.before(row); else sibling.after(row);
      renumber();
    };
    row.append(field('Geofence', geofence), field('Expected arrival', arrival), h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'up', onclick: () => move(-1) }, 'Up'),
      h('button', { type: 'button', class: 'down', onclick: () => move(1) }, 'Down'),
      h('button', { type: 'button', class: 'remove', onclick: () => { row.remove(); renumber(); } }, 'Remove')));
    fieldsOf.set(row, { geofence, arrival });
    return row;
  }
  /** Each row's buttons name its place, for screen readers. */
  function renumber() {
    [...rows.children].forEach((row, i) => {
      row.querySelector('.up').setAttribute('aria-label', `Move waypoint ${i + 1} up`);
      row.querySelector('.down').setAttribute('aria-label', `Move waypoint ${i + 1} down`);
      row.querySelector('.remove').setAttribute('aria-label', `Remove waypoint ${i + 1}`);
    });
  }
  const addWaypoint = () => { rows.append(waypointRow(60 * (rows.children.length + 1))); renumber(); };
  if (geofences.length > 0) addWaypoint();

  return h('details', { class: 'card' }, h('summary', {}, 'Create a travel'),
    geofences.length === 0 ? h('p', {}, 'A travel goes through geofences: ', h('a', { href: '#/geofences' }, 'draw one first'), '.') : null,
    h('form', { class: 'form', onsubmit: async (event) => {
      event.preventDefault();
      failure.clear();
      const waypoints = [...rows.children].map((row) => fieldsOf.get(row)).map((f) => ({ geofence: f.geofence.value, expectedArrival: apiTime(f.arrival.value) }));
      try {
        const { data } = await api.post('/travels', { vehicle: vehicle.value, startTime: apiTime(start.value), waypoints });
        notify(`Travel ${data.travelId} created`);
        await created();
        navigate(`/travels/${data.travelId}`);
      } catch (error) {
        failure.show(problemText(error));
      }
    } },
    field('Vehicle', vehicle),
    field('Start', start, `In your time zone, ${timeZone}.`),
    h('fieldset', {}, h('legend', {}, 'Waypoints, in the order the vehicle is to reach them'), rows,
      h('button', { type: 'button', onclick: addWaypoint, disabled: geofences.length === 0 }, 'Add waypoint')),
    failure.node,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', disabled: geofences.length === 0 }, 'Create travel'))));
}

/** One travel followed: its waypoints with status and ETA, read again every 30 s. */
async function follow(main, { api, can }, id) {
  const area = h('div', { 'aria-live': 'polite' });
  const failure = errorLine();
  main.append(h('p', {}, h('a', { href: '#/travels' }, 'All active travels')), area, failure.node);
  let travel;

  async function draw() {
    try {
      travel = (await api.get(`/travels/${encodeURIComponent(id)}`)).data;
      failure.clear();
    } catch (error) {
      failure.show(problemText(error));
      return;
    }
    const active = travel.status === 'Scheduled' || travel.status === 'In progress';
    area.replaceChildren(
      h('h2', {}, `Travel ${travel.travelId}: ${travel.vehicle}`),
      h('dl', { class: 'card facts' },
        h('dt', {}, 'Status'), h('dd', { class: 'travel-status' }, statusBadge(travel.status)),
        h('dt', {}, 'Start'), h('dd', {}, localText(travel.startTime)),
        h('dt', {}, 'Progress'), h('dd', {}, `${travel.completedWaypoints} of ${travel.totalWaypoints} waypoints (${travel.progress}%)`),
        h('dt', {}, 'Time zone'), h('dd', {}, travel.timezone)),
      table('Waypoints', [
        { label: '#', cell: (w) => String(w.order) },
        { label: 'Geofence', cell: (w) => w.geofence },
        { label: 'Status', cell: (w) => statusBadge(w.status) },
        { label: 'Expected', cell: (w) => localText(w.expectedArrival) },
        { label: 'ETA', cell: (w) => localText(w.estimatedArrival) },
        { label: 'Arrived', cell: (w) => localText(w.arrivedAt) },
        { label: 'Timing', cell: (w) => w.timing || '—' },
      ], travel.waypoints),
      h('p', { class: 'hint' }, 'Read again every 30 seconds while this page is open.'),
      h('div', { class: 'actions' }, active && can('travels:write') ? h('button', { type: 'button', class: 'danger', onclick: cancel }, 'Cancel travel') : null));
  }

  async function cancel() {
    const sure = await confirmDialog({
      title: `Cancel travel ${travel.travelId}?`,
      body: `${travel.vehicle}'s travel is cancelled: its pending waypoints become Cancelled.`,
      confirmLabel: 'Cancel travel', danger: true,
    });
    if (!sure) return;
    try {
      const { data } = await api.delete(`/travels/${travel.travelId}`);
      notify(data.message);
      await draw();
    } catch (error) {
      failure.show(problemText(error));
    }
  }

  await draw();
  const timer = setInterval(draw, REFRESH_MS);
  return () => clearInterval(timer);
}
