import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { etagOf, LIBRARY_CACHE, loadAsset, OWN_FILES_CACHE, pageFilesIn, type MapAsset } from '../map/map-assets.ts';
import { sendAsset } from '../map/map-routes.ts';
import { tileOrigin, type MapTiles } from '../map/map-tiles.ts';
import { selfOnlyPolicy } from '../self-only-policy.ts';
import { consolePage } from './console-page.ts';

/**
 * Only this server: scripts and styles from its own files, data from its API, the live map in a frame
 * of this origin, and data: images (Leaflet-Geoman's toolbar icons are inline SVG in its stylesheet).
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = selfOnlyPolicy({ img: ['data:'], frames: 'self' });

/** The same policy, with images from the tile server's origin when one is configured (the geofences' map draws its tiles). */
const securityHeaders = (tiles?: MapTiles) => ({
  'Content-Security-Policy': tiles ? selfOnlyPolicy({ img: ['data:', tileOrigin(tiles)], frames: 'self' }) : CONSOLE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
});

const OWN_FILES = pageFilesIn(join(import.meta.dirname, 'static'));
const geomanDir = dirname(createRequire(import.meta.url).resolve('@geoman-io/leaflet-geoman-free'));
/**
 * The service worker that shows pushed notifications, served with the console's headers (a worker
 * runs under the policy of the response that carried it). Its scope is /console, the page itself,
 * one level above the script's directory: Service-Worker-Allowed says the server allows that.
 */
const NOTIFICATION_WORKER = join(import.meta.dirname, 'worker', 'notification-worker.js');
/** Leaflet-Geoman (drawing and editing shapes on the map), from the installed package. */
const VENDOR_FILES = new Map(['leaflet-geoman.js', 'leaflet-geoman.css'].map((name) => [name, join(geomanDir, name)]));

/**
 * The web console at /console: one page, its scripts and styles, and the drawing library. Public, like
 * /map: the page signs in (email and password: a session cookie) and every request for data goes to the
 * API with that cookie, writes with the session's CSRF token. With `tiles`, its maps draw that tile
 * server's map under the graticule, as the live map does.
 */
export function consoleRoutes(tiles?: MapTiles) {
  const app = new Hono();
  const SECURITY_HEADERS = securityHeaders(tiles);
  const html = new TextEncoder().encode(consolePage(tiles));
  const page: MapAsset = { body: html, contentType: 'text/html; charset=utf-8', etag: etagOf(html), cacheControl: 'no-cache' };
  app.get('/', (c) => sendAsset(c, page, SECURITY_HEADERS));
  app.get('/static/:file', async (c) => {
    const path = OWN_FILES.get(c.req.param('file'));
    return path ? sendAsset(c, await loadAsset(path, OWN_FILES_CACHE), SECURITY_HEADERS) : c.notFound();
  });
  app.get('/notification-worker.js', async (c) => sendAsset(c, await loadAsset(NOTIFICATION_WORKER, OWN_FILES_CACHE), { ...SECURITY_HEADERS, 'Service-Worker-Allowed': '/console' }));
  app.get('/vendor/:file', async (c) => {
    const path = VENDOR_FILES.get(c.req.param('file'));
    return path ? sendAsset(c, await loadAsset(path, LIBRARY_CACHE), SECURITY_HEADERS) : c.notFound();
  });
  return app;
}
