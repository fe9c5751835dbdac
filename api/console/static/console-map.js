// A Leaflet map for the console's pages: the offline graticule (over the tile server's map when one
// is configured, handed over by the page as the live map's is) and a scale. The caller removes it.
import { graticule } from '/map/static/graticule.js';

const L = globalThis.L;

/** Leaflet shows an attribution as HTML; the operator's setting is text. */
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A map in `container`, labelled for screen readers by `label`, centred on `center` at `zoom`. */
export function consoleMap(container, { label, center = [20, 0], zoom = 2 }) {
  container.setAttribute('role', 'region');
  container.setAttribute('aria-label', label);
  const map = L.map(container, { worldCopyJump: true }).setView(center, zoom);
  map.on('zoomanim', () => { map.zoomAnimating = true; });
  map.on('zoomend', () => { map.zoomAnimating = false; });
  const { tileUrl, tileAttribution } = document.body.dataset;
  if (tileUrl) L.tileLayer(tileUrl, { attribution: escapeHtml(tileAttribution ?? ''), maxNativeZoom: 19, maxZoom: 24, zIndex: 0 }).addTo(map);
  graticule().addTo(map);
  L.control.scale({ imperial: false }).addTo(map);
  return map;
}

/**
 * Removes a map when its page is left. A zoom still animating finishes first: Leaflet ends it from a
 * timer that would move panes `remove()` has taken away.
 */
export function removeMap(map) {
  if (map.zoomAnimating) map.once('zoomend', () => map.remove());
  else map.remove();
}

