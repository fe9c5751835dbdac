// A geofence's shape between the map (a Leaflet layer), the form's fields and the API's body:
// a circle's centre and radius, or a polygon's vertices as "lat, lng" lines.

const L = globalThis.L;

/** Seven decimals: the precision the API keeps (about a centimetre). */
const fixed = (n) => Number(n.toFixed(7));

/** Leaflet's ring of a polygon layer (a rectangle included): its outer ring's vertices. */
const ringOf = (layer) => {
  const rings = layer.getLatLngs();
  return Array.isArray(rings[0]) ? rings[0] : rings;
};

export const isCircle = (layer) => layer instanceof L.Circle;

/** The API's shape fields for a layer: `{type, center, radiusMeters}` or `{type, vertices}`. */
export function shapeOf(layer) {
  if (isCircle(layer)) {
    const c = layer.getLatLng();
    return { type: 'circle', center: { lat: fixed(c.lat), lng: fixed(c.lng) }, radiusMeters: Math.round(layer.getRadius() * 10) / 10 };
  }
  return { type: 'polygon', vertices: ringOf(layer).map((p) => ({ lat: fixed(p.lat), lng: fixed(p.lng) })) };
}

/** A layer for a geofence of the API (`GET /geofences`). */
export function layerOf(geofence, options) {
  return geofence.type === 'circle'
    ? L.circle([geofence.centerLat, geofence.centerLng], { ...options, radius: geofence.radiusMeters })
    : L.polygon(geofence.vertices.map((v) => [v.lat, v.lng]), options);
}

/** Vertices as the form shows them: one "lat, lng" a line. */
export const verticesText = (vertices) => vertices.map((v) => `${v.lat}, ${v.lng}`).join('\n');

/** The vertices of the form's text, or an error naming the line that is not "lat, lng". */
export function parseVertices(text) {
  const vertices = [];
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  for (const [i, line] of lines.entries()) {
    const match = /^(-?\d+(?:\.\d+)?)\s*[,;\s]\s*(-?\d+(?:\.\d+)?)$/.exec(line);
    if (!match) throw new Error(`Vertex line ${i + 1} is not "latitude, longitude": ${line}`);
    vertices.push({ lat: Number(match[1]), lng: Number(match[2]) });
  }
  return vertices;
}
