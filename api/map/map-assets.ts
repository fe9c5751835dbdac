import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';

/** A file the map page loads, read once per process and served from memory with its validator. */
export interface MapAsset {
  body: Uint8Array;
  contentType: string;
  etag: string;
  cacheControl: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
};

// The page's own scripts change with each release and have no version in their names: the browser
// asks again every time (a 304 when unchanged). Leaflet's files change only with the package.
export const OWN_FILES_CACHE = 'no-cache';
export const LIBRARY_CACHE = 'public, max-age=86400';

const staticDir = join(import.meta.dirname, 'static');
const leafletDir = dirname(createRequire(import.meta.url).resolve('leaflet/dist/leaflet.js'));

/**
 * Every name a URL may ask for, mapped to its file. A request names one of these or gets 404, so no
 * path a client sends (`..`, encoded slashes) is ever joined onto a directory.
 */
/** The page files of `dir` (scripts, styles, icons; lower-case names only) by name. */
export const pageFilesIn = (dir: string) => new Map(
  readdirSync(dir)
    .filter((name) => /^[a-z0-9-]+\.(js|css|svg)$/.test(name))
    .map((name) => [name, join(dir, name)]),
);
const OWN_FILES = pageFilesIn(staticDir);
const LEAFLET_FILES = new Map(['leaflet.js', 'leaflet.js.map', 'leaflet.css'].map((name) => [name, join(leafletDir, name)]));
const LEAFLET_IMAGES = new Map(
  ['layers.png', 'layers-2x.png', 'marker-icon.png', 'marker-icon-2x.png', 'marker-shadow.png'].map((name) => [name, join(leafletDir, 'images', name)]),
);

export const etagOf = (body: Uint8Array | string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

const loaded = new Map<string, Promise<MapAsset>>();

export function loadAsset(path: string, cacheControl: string): Promise<MapAsset> {
  let asset = loaded.get(path);
  if (!asset) {
    asset = readFile(path).then((body) => ({ body, contentType: CONTENT_TYPES[extname(path)]!, etag: etagOf(body), cacheControl }));
    // A failed read (a file removed under a running server) is tried again next time, not remembered.
    asset.catch(() => loaded.delete(path));
    loaded.set(path, asset);
  }
  return asset;
}

/** One of the page's scripts, styles or its icon (api/map/static), or undefined for any other name. */
export function ownAsset(name: string): Promise<MapAsset> | undefined {
  const path = OWN_FILES.get(name);
  return path === undefined ? undefined : loadAsset(path, OWN_FILES_CACHE);
}

/** One of Leaflet's dist files (`images/…` for its images), or undefined for any other name. */
export function leafletAsset(name: string, inImages = false): Promise<MapAsset> | undefined {
  const path = (inImages ? LEAFLET_IMAGES : LEAFLET_FILES).get(name);
  return path === undefined ? undefined : loadAsset(path, LIBRARY_CACHE);
}
