/**
 * A raster tile server the live map draws under its graticule (MAP_TILE_URL, MAP_TILE_ATTRIBUTION).
 * Without one the map is offline: the page loads nothing from anywhere but this server.
 */
export interface MapTiles {
  /** A `{z}/{x}/{y}` template on one http or https host, e.g. `https://tile.example.com/{z}/{x}/{y}.png`. */
  url: string;
  /** The text the tile server's terms ask the map to show, e.g. `© OpenStreetMap contributors`. */
  attribution: string;
}

/** The one origin the page may load images from besides itself: the template's scheme, host and port. */
export const tileOrigin = (tiles: MapTiles) => new URL(tiles.url).origin;
