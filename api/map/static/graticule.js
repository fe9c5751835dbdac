// The base layer: a plain background with a graticule (lines of latitude and longitude, labelled),
// drawn on canvas tiles in the browser, so the map needs no tile server and makes no request.

const L = globalThis.L;

/** 1, 2 or 5 times a power of ten, the smallest at least `degrees`. */
function niceStep(degrees) {
  const power = 10 ** Math.floor(Math.log10(degrees));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= degrees) return factor * power;
  return 10 * power;
}

const label = (value, positive, negative) => `${Math.abs(+value.toFixed(6))}°${value >= 0 ? positive : negative}`;

// Labels on every third row or column of tiles: on every tile they would crowd the map.
const LABEL_EVERY_TILES = 3;

export const Graticule = L.GridLayer.extend({
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
    // About two lines a tile (128 px apart) whatever the zoom.
    const step = niceStep(360 / 2 ** coords.z / 2);
    const pixel = (lat, lng) => map.project([lat, lng], coords.z).subtract(origin);

    context.strokeStyle = '#d3dae3';
    context.fillStyle = '#7d8b99';
    context.font = '10px system-ui, sans-serif';
    context.lineWidth = 1;
    // A label that would run over the tile's edge is left out: the next tile cannot draw its rest.
    const labelAt = (text, x, y) => {
      if (x >= 0 && y >= 10 && x + context.measureText(text).width <= size.x && y <= size.y) context.fillText(text, x, y);
    };
    context.beginPath();
    for (let lng = Math.ceil(northWest.lng / step) * step; lng <= southEast.lng; lng += step) {
      const x = Math.round(pixel(0, lng).x) + 0.5;
      context.moveTo(x, 0);
      context.lineTo(x, size.y);
      if (coords.y % LABEL_EVERY_TILES === 0) labelAt(label(lng, 'E', 'W'), x + 3, 12);
    }
    for (let lat = Math.ceil(southEast.lat / step) * step; lat <= northWest.lat; lat += step) {
      const y = Math.round(pixel(lat, 0).y) + 0.5;
      context.moveTo(0, y);
      context.lineTo(size.x, y);
      if (coords.x % LABEL_EVERY_TILES === 0) labelAt(label(lat, 'N', 'S'), 3, y - 3);
    }
    context.stroke();
    return canvas;
  },
});
