// The base layer: a plain background with a graticule (lines of latitude and longitude), drawn in
// the browser, so the map needs no tile server and makes no request. The lines are canvas tiles;
// their labels sit along the map's top and left edges, where they stay readable as the map moves.

const L = globalThis.L;

/** 1, 2 or 5 times a power of ten, the smallest at least `degrees`. */
function niceStep(degrees) {
  const power = 10 ** Math.floor(Math.log10(degrees));
  for (const factor of [1, 2, 5]) if (factor * power >= degrees) return factor * power;
  return 10 * power;
}

/** Degrees between lines at a zoom level: about two lines a 256-pixel tile. */
const stepAt = (zoom) => niceStep(360 / 2 ** Math.round(zoom) / 2);

/** The multiples of `step` from `low` to `high`. */
function linesBetween(low, high, step) {
  const lines = [];
  for (let i = Math.ceil(low / step); i * step <= high; i++) lines.push(i * step);
  return lines;
}

const label = (value, positive, negative) => `${Math.abs(+value.toFixed(6))}°${value > 0 ? positive : value < 0 ? negative : ''}`;

const GraticuleLines = L.GridLayer.extend({
  createTile(coords) {
    const size = this.getTileSize();
    const ratio = globalThis.devicePixelRatio || 1;
    const canvas = document.createElement('canvas');
    canvas.width = size.x * ratio;
    canvas.height = size.y * ratio;
    const context = canvas.getContext('2d');
    context.scale(ratio, ratio);
    const map = this._map;
    const origin = coords.scaleBy(size);
    const northWest = map.unproject(origin, coords.z);
    const southEast = map.unproject(origin.add(size), coords.z);
    const step = stepAt(coords.z);
    context.strokeStyle = '#d3dae3';
    context.lineWidth = 1;
    context.beginPath();
    for (const lng of linesBetween(northWest.lng, southEast.lng, step)) {
      const x = Math.round(map.project([0, lng], coords.z).x - origin.x) + 0.5;
      context.moveTo(x, 0);
      context.lineTo(x, size.y);
    }
    for (const lat of linesBetween(southEast.lat, northWest.lat, step)) {
      const y = Math.round(map.project([lat, 0], coords.z).y - origin.y) + 0.5;
      context.moveTo(0, y);
      context.lineTo(size.x, y);
    }
    context.stroke();
    return canvas;
  },
});

/** The lines' values along the map's edges, placed again whenever the view changes. */
const GraticuleLabels = L.Layer.extend({
  onAdd(map) {
    this._box = L.DomUtil.create('div', 'graticule-labels', map.getContainer());
    map.on('move zoom viewreset resize', this._place, this);
    this._place();
  },
  onRemove(map) {
    map.off('move zoom viewreset resize', this._place, this);
    this._box.remove();
  },
  _place() {
    const map = this._map;
    const bounds = map.getBounds();
    const size = map.getSize();
    const step = stepAt(map.getZoom());
    const labels = [];
    for (const lng of linesBetween(bounds.getWest(), bounds.getEast(), step)) {
      const x = map.latLngToContainerPoint([bounds.getCenter().lat, lng]).x;
      if (x > 56 && x < size.x - 60) labels.push([label(lng, 'E', 'W'), x + 3, 2]);
    }
    for (const lat of linesBetween(bounds.getSouth(), bounds.getNorth(), step)) {
      const y = map.latLngToContainerPoint([lat, bounds.getCenter().lng]).y;
      if (y > 90 && y < size.y - 40) labels.push([label(lat, 'N', 'S'), 3, y - 15]);
    }
    this._box.replaceChildren(...labels.map(([text, x, y]) => {
      const span = L.DomUtil.create('span', 'graticule-label');
      span.textContent = text;
      // Placed through the CSSOM, which the Content-Security-Policy allows (style attributes it does not).
      span.style.left = `${x}px`;
      span.style.top = `${y}px`;
      return span;
    }));
  },
});

/** The graticule: lines under everything, labels on the edges. */
export function graticule() {
  return L.layerGroup([new GraticuleLines({ tileSize: 256 }), new GraticuleLabels()]);
}
