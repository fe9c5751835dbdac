// Geofences: the account's geofences on a map and in a list. Draw a circle, polygon or rectangle with
// the drawing toolbar, name it and save it; select one to move its vertices (or its circle's centre
// and radius) on the map or in the form's fields, and save; delete one. Everything but drawing is in
// fields and buttons too, so the page works from the keyboard.
import { problemText } from './console-api.js';
import { consoleMap, removeMap } from './console-map.js';
import { confirmDialog, errorLine, field, h, notify, table } from './dom.js';
import { geofenceForm } from './geofence-form.js';
import { layerOf } from './geofence-shape.js';

const L = globalThis.L;
const SHOWN = { className: 'geofence-shape', weight: 2 };
const SELECTED = { className: 'geofence-shape selected', weight: 3 };
/** A zoom at which a street-sized geofence can be drawn. */
const CLOSE_ZOOM = 15;

export async function render(main, { api, can }) {
  const write = can('geofences:write');
  const mapNode = h('div', { class: 'map-panel geofence-map' });
  const panel = h('div', { class: 'geofence-panel' });
  const listArea = h('div');
  const pageError = errorLine();
  main.append(h('div', { class: 'geofence-layout' }, mapNode, panel), pageError.node, h('h2', {}, 'All geofences'), listArea);

  const map = consoleMap(mapNode, { label: 'Map of the geofences', center: [19.43, -99.13], zoom: 11 });
  const shapes = L.featureGroup().addTo(map);
  const vehicleLayer = L.layerGroup().addTo(map);
  /** geofence id → its layer */
  const layers = new Map();
  let geofences = [];
  /** What the panel edits: { geofence?, layer } (no geofence: one just drawn, not saved yet). */
  let editing;
  /** Set once the reader moves the map themselves: the first list read must not move it back. */
  let placed = false;

  // Where to look: a vehicle's current position, or a latitude and longitude.
  const goLat = h('input', { type: 'text', inputmode: 'decimal', size: '11' });
  const goLng = h('input', { type: 'text', inputmode: 'decimal', size: '11' });
  const goTo = h('form', { class: 'inline-form', 'aria-label': 'Centre the map', onsubmit: (event) => {
    event.preventDefault();
    const lat = Number(goLat.value); const lng = Number(goLng.value);
    if (goLat.value.trim() === '' || goLng.value.trim() === '' || !Number.isFinite(lat) || !Number.isFinite(lng) || Math.abs(lat) > 90 || Math.abs(lng) > 180) {
      pageError.show('Give a latitude from -90 to 90 and a longitude from -180 to 180 to centre the map.');
      return;
    }
    pageError.clear();
    placed = true;
    map.setView([lat, lng], CLOSE_ZOOM);
  } }, field('Latitude', goLat), field('Longitude', goLng), h('button', { type: 'submit' }, 'Centre map'));
  const tools = h('div', { class: 'map-tools' }, goTo);
  if (can('devices:read')) {
    const vehicle = h('select', {});
    tools.prepend(h('form', { class: 'inline-form', 'aria-label': 'Show a vehicle', onsubmit: async (event) => {
      event.preventDefault();
      try {
        const { data } = await api.get(`/devices/${encodeURIComponent(vehicle.value)}/status`);
        if (data.latitude === null) throw new Error(`${data.name} has no position yet`);
        vehicleLayer.clearLayers();
        L.circleMarker([data.latitude, data.longitude], { radius: 7, className: 'vehicle-dot-marker', pmIgnore: true, snapIgnore: true })
          .bindTooltip(`${data.name}: ${data.status}, ${data.speedKmh ?? 0} km/h`).addTo(vehicleLayer);
        placed = true;
        map.setView([data.latitude, data.longitude], CLOSE_ZOOM);
        pageError.clear();
      } catch (error) {
        pageError.show(problemText(error));
      }
    } }, field('Vehicle', vehicle), h('button', { type: 'submit' }, 'Show vehicle')));
    api.get('/devices/status').then(({ data }) => {
      vehicle.replaceChildren(...data.map((d) => h('option', { value: d.deviceId }, d.name)));
    }, (error) => pageError.show(problemText(error)));
  }
  main.insertBefore(tools, main.querySelector('.geofence-layout'));

  if (write) {
    map.pm.addControls({
      position: 'topleft', drawMarker: false, drawCircleMarker: false, drawPolyline: false, drawText: false,
      drawRectangle: true, drawPolygon: true, drawCircle: true,
      editMode: false, dragMode: false, cutPolygon: false, removalMode: false, rotateMode: false,
    });
    // The toolbar's buttons are icons titled on their container: name them for screen readers.
    for (const container of mapNode.querySelectorAll('.leaflet-pm-toolbar .button-container[title]')) {
      container.querySelector('a')?.setAttribute('aria-label', container.title);
    }
    // No snapping: a corner goes where it is clicked, not onto a neighbouring geofence's edge.
    map.pm.setGlobalOptions({ snappable: false });
    map.on('pm:create', ({ layer }) => {
      stopEditing();
      layer.setStyle?.(SELECTED);
      startEditing({ layer });
    });
  }

  function stopEditing() {
    if (!editing) return;
    editing.layer.pm?.disable();
    if (!editing.geofence) editing.layer.remove();
    editing = undefined;
    panel.replaceChildren(idleText());
    drawShapes();
  }

  const idleText = () => h('div', {}, h('p', { class: 'hint' }, write
    ? 'Draw a circle, polygon or rectangle with the tools on the map, start one at the map\'s centre, or choose a geofence in the list to change it.'
    : 'Choose a geofence in the list to see it on the map.'),
  write ? h('div', { class: 'actions' },
    h('button', { type: 'button', onclick: () => startShape('circle') }, 'New circle here'),
    h('button', { type: 'button', onclick: () => startShape('polygon') }, 'New polygon here')) : null);

  /** A shape at the map's centre, 200 m across, to shape in the fields (the keyboard's way to draw). */
  function startShape(kind) {
    stopEditing();
    const { lat, lng } = map.getCenter();
    const dLat = 100 / 111_320;
    const dLng = dLat / Math.cos((lat * Math.PI) / 180);
    const layer = kind === 'circle'
      ? L.circle([lat, lng], { ...SELECTED, radius: 100 })
      : L.polygon([[lat - dLat, lng - dLng], [lat - dLat, lng + dLng], [lat + dLat, lng + dLng], [lat + dLat, lng - dLng]], SELECTED);
    startEditing({ layer: layer.addTo(map) });
  }
  panel.append(idleText());

  /** The panel's form for a geofence (or a shape just drawn), its layer editable on the map. */
  function startEditing(target) {
    editing = target;
    const { geofence, layer } = target;
    panel.replaceChildren(geofenceForm({
      geofence, layer, write,
      async save(body) {
        const { data } = geofence ? await api.patch(`/geofences/${geofence.id}`, body) : await api.post('/geofences', body);
        notify(`${data.name} saved`);
        layer.pm.disable();
        if (!geofence) layer.remove();
        editing = undefined;
        panel.replaceChildren(idleText());
        await load();
        // The reader may have chosen another geofence while the list was read: keep to their choice,
        // on its shape as just redrawn (the one they chose was on the map the read replaced).
        if (!editing) select(data.id, false);
        else if (editing.geofence) select(editing.geofence.id);
      },
      close: stopEditing,
      remove: () => remove(geofence),
    }));
    panel.closest('.geofence-layout').scrollIntoView({ block: 'nearest' });
    panel.querySelector('input').focus({ preventScroll: true });
  }

  function select(id, edit = true) {
    stopEditing();
    const geofence = geofences.find((g) => g.id === id);
    const layer = layers.get(id);
    if (!geofence || !layer) return;
    map.fitBounds(layer.getBounds(), { maxZoom: 17, padding: [30, 30] });
    layer.setStyle(SELECTED);
    if (edit) startEditing({ geofence, layer });
  }

  async function remove(geofence) {
    const sure = await confirmDialog({
      title: `Delete ${geofence.name}?`,
      body: `The geofence ${geofence.name} and its recorded visits are deleted. The event log keeps its events.`,
      confirmLabel: 'Delete geofence', danger: true,
    });
    if (!sure) return;
    try {
      await api.delete(`/geofences/${geofence.id}`);
      notify(`${geofence.name} deleted`);
      if (editing?.geofence?.id === geofence.id) { editing.layer.pm.disable(); editing = undefined; panel.replaceChildren(idleText()); }
      await load();
    } catch (error) {
      pageError.show(problemText(error));
    }
  }

  function drawShapes() {
    shapes.clearLayers();
    layers.clear();
    for (const g of geofences) {
      const layer = layerOf(g, SHOWN).bindTooltip(g.name);
      layer.on('click', () => { if (!map.pm.globalDrawModeEnabled()) select(g.id); });
      layers.set(g.id, layer.addTo(shapes));
    }
  }

  async function load() {
    try {
      geofences = (await api.get('/geofences')).data;
    } catch (error) {
      listArea.replaceChildren(h('p', { class: 'error', role: 'alert' }, problemText(error)));
      return;
    }
    drawShapes();
    listArea.replaceChildren(table('Geofences', [
      { label: 'Name', cell: (g) => g.name },
      { label: 'Shape', cell: (g) => (g.type === 'circle' ? `circle, ${g.radiusMeters} m` : `polygon, ${g.vertexCount} vertices`) },
      { label: 'Centre', cell: (g) => `${g.centerLat}, ${g.centerLng}` },
      { label: 'Actions', cell: (g) => h('div', { class: 'actions' },
        h('button', { type: 'button', 'aria-label': `${write ? 'Edit' : 'Show'} ${g.name}`, onclick: () => select(g.id) }, write ? 'Edit' : 'Show'),
        write ? h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${g.name}`, onclick: () => remove(g) }, 'Delete') : null) },
    ], geofences, 'No geofences yet.'));
  }

  await load();
  if (geofences.length > 0 && !editing && !placed) map.fitBounds(shapes.getBounds(), { padding: [30, 30] });
  return () => removeMap(map);
}
