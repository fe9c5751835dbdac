// The form of one geofence beside the map: its name, its shape in fields (a circle's centre and
// radius, or a polygon's vertices) kept in step with its layer on the map, where the drawing library
// lets its corners, centre and edge be dragged, and its dwell times.
import { problemText } from './console-api.js';
import { errorLine, field, h } from './dom.js';
import { isCircle, parseVertices, shapeOf, verticesText } from './geofence-shape.js';

/**
 * `geofence`: the API's, or undefined for a shape not saved yet. `save(body)` sends the API's body
 * (its refusal is shown in the form); `close()` leaves the form; `remove()` deletes the geofence.
 * Without `write` the fields are read-only and the layer stays put.
 */
export function geofenceForm({ geofence, layer, write, save, close, remove }) {
  if (write) layer.pm.enable({ allowSelfIntersection: false });
  const circle = isCircle(layer);
  const name = h('input', { type: 'text', required: true, maxlength: '200', value: geofence?.name ?? '' });
  const lat = h('input', { type: 'text', inputmode: 'decimal', required: true });
  const lng = h('input', { type: 'text', inputmode: 'decimal', required: true });
  const radius = h('input', { type: 'number', step: 'any', required: true });
  const vertices = h('textarea', { rows: '6', spellcheck: 'false', required: true });
  const enterDwell = h('input', { type: 'number', step: '1', value: String(geofence?.enterDwellSeconds ?? 0) });
  const exitDwell = h('input', { type: 'number', step: '1', value: String(geofence?.exitDwellSeconds ?? 0) });
  const failure = errorLine();

  const fromLayer = () => {
    const shape = shapeOf(layer);
    if (shape.type === 'circle') {
      lat.value = String(shape.center.lat); lng.value = String(shape.center.lng); radius.value = String(shape.radiusMeters);
    } else {
      vertices.value = verticesText(shape.vertices);
    }
  };
  /** The fields onto the map; throws when they are not numbers. */
  const toLayer = () => {
    if (circle) {
      const c = [Number(lat.value), Number(lng.value)];
      if (!c.every(Number.isFinite) || !Number.isFinite(Number(radius.value))) throw new Error('The centre and the radius must be numbers');
      layer.setLatLng(c);
      layer.setRadius(Number(radius.value));
    } else {
      layer.setLatLngs(parseVertices(vertices.value).map((v) => [v.lat, v.lng]));
    }
    if (write) { layer.pm.disable(); layer.pm.enable({ allowSelfIntersection: false }); }
  };
  const applyFields = () => {
    failure.clear();
    try { toLayer(); } catch (error) { failure.show(error.message); }
  };
  fromLayer();
  layer.on('pm:edit pm:markerdragend', fromLayer);

  const shapeFields = circle
    ? [field('Centre latitude', lat), field('Centre longitude', lng), field('Radius (m)', radius, 'More than 0, at most 100 km.')]
    : [field('Vertices', vertices, 'One "latitude, longitude" a line, in order around the area.')];
  for (const input of [lat, lng, radius, vertices]) input.addEventListener('change', applyFields);

  const submit = async (event) => {
    event.preventDefault();
    failure.clear();
    try {
      toLayer();
      await save({ name: name.value, ...shapeOf(layer), enterDwellSeconds: Number(enterDwell.value), exitDwellSeconds: Number(exitDwell.value) });
    } catch (error) {
      failure.show(problemText(error));
    }
  };

  const title = geofence ? (write ? `Edit ${geofence.name}` : geofence.name) : `New ${circle ? 'circle' : 'polygon'}`;
  return h('form', { class: 'form', 'aria-labelledby': 'geofence-form-title', onsubmit: submit },
    h('h2', { id: 'geofence-form-title' }, title),
    h('fieldset', { class: 'plain', disabled: !write },
      field('Name', name, 'Travels name geofences by it, exactly.'),
      ...shapeFields,
      field('Enter after (s)', enterDwell, 'How long a vehicle must stay inside before its entry counts.'),
      field('Exit after (s)', exitDwell)),
    failure.node,
    h('div', { class: 'actions' },
      write ? h('button', { type: 'submit', class: 'primary' }, geofence ? 'Save changes' : 'Save geofence') : null,
      h('button', { type: 'button', onclick: close }, write ? (geofence ? 'Stop editing' : 'Discard') : 'Close'),
      write && geofence ? h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete') : null));
}
