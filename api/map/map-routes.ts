import { Hono, type Context } from 'hono';
import { etagOf, leafletAsset, ownAsset, type MapAsset } from './map-assets.ts';
import { mapPage } from './map-page.ts';
import { SET_PASSWORD_PAGE } from './set-password-page.ts';
import { tileOrigin, type MapTiles } from './map-tiles.ts';
import { selfOnlyPolicy } from '../self-only-policy.ts';

/**
 * Only this server: scripts and styles from its own files (none inline), data from its API, framed only
 * by this server's console, and no
 * tile server or font host, so the page makes no request anywhere else. form-action 'none': if the
 * scripts fail, the login form must not submit the key in a URL.
 */
export const MAP_CONTENT_SECURITY_POLICY = selfOnlyPolicy({ framedBySelf: true });

/**
 * The same policy, with images from the tile server's origin when one is configured, and data: images:
 * Leaflet stops loading a tile that scrolled away by pointing it at an inline empty GIF.
 */
export const mapContentSecurityPolicy = (tiles?: MapTiles) =>
  tiles ? selfOnlyPolicy({ img: ['data:', tileOrigin(tiles)], framedBySelf: true }) : MAP_CONTENT_SECURITY_POLICY;

const securityHeaders = (tiles?: MapTiles) => ({
  'Content-Security-Policy': mapContentSecurityPolicy(tiles),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
});

/** True when the client's cached copy is this one (If-None-Match lists its validator, or `*`). */
export function fresh(c: Context, etag: string): boolean {
  const header = c.req.header('if-none-match');
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

export function sendAsset(c: Context, asset: MapAsset, security: Record<string, string>): Response {
  const headers = { ...security, ETag: asset.etag, 'Cache-Control': asset.cacheControl };
  if (fresh(c, asset.etag)) return c.body(null, 304, headers);
  return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { ...headers, 'Content-Type': asset.contentType });
}

/**
 * The live map at /map: the page, its scripts and styles (api/map/static), and Leaflet's files from
 * the installed package. Public, like /docs: the page signs in (email and password: a session cookie)
 * or asks for an API key, and every request for data goes to the API with the one or the other.
 * /map/set-password is the page of `fleet user create`'s one-time links. With `tiles`, the page draws that tile server's map under its graticule.
 */
export function mapRoutes(tiles?: MapTiles) {
  const app = new Hono();
  const security = securityHeaders(tiles);
  const html = new TextEncoder().encode(mapPage(tiles));
  const page: MapAsset = { body: html, contentType: 'text/html; charset=utf-8', etag: etagOf(html), cacheControl: 'no-cache' };

  const setPasswordHtml = new TextEncoder().encode(SET_PASSWORD_PAGE);
  const setPassword: MapAsset = { body: setPasswordHtml, contentType: 'text/html; charset=utf-8', etag: etagOf(setPasswordHtml), cacheControl: 'no-cache' };

  app.get('/', (c) => sendAsset(c, page, security));
  app.get('/set-password', (c) => sendAsset(c, setPassword, security));
  app.get('/static/:file', async (c) => {
    const asset = ownAsset(c.req.param('file'));
    return asset ? sendAsset(c, await asset, security) : c.notFound();
  });
  app.get('/leaflet/:file', async (c) => {
    const asset = leafletAsset(c.req.param('file'));
    return asset ? sendAsset(c, await asset, security) : c.notFound();
  });
  app.get('/leaflet/images/:file', async (c) => {
    const asset = leafletAsset(c.req.param('file'), true);
    return asset ? sendAsset(c, await asset, security) : c.notFound();
  });
  return app;
}
