import { Hono, type Context } from 'hono';
import { etagOf, leafletAsset, ownAsset, type MapAsset } from './map-assets.ts';
import { mapPage } from './map-page.ts';
import { selfOnlyPolicy } from '../self-only-policy.ts';

/**
 * Only this server: scripts and styles from its own files (none inline), data from its API, and no
 * tile server or font host, so the page makes no request anywhere else. form-action 'none': if the
 * scripts fail, the login form must not submit the key in a URL.
 */
export const MAP_CONTENT_SECURITY_POLICY = selfOnlyPolicy();

const SECURITY_HEADERS = {
  'Content-Security-Policy': MAP_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** True when the client's cached copy is this one (If-None-Match lists its validator, or `*`). */
function fresh(c: Context, etag: string): boolean {
  const header = c.req.header('if-none-match');
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

function send(c: Context, asset: MapAsset): Response {
  const headers = { ...SECURITY_HEADERS, ETag: asset.etag, 'Cache-Control': asset.cacheControl };
  if (fresh(c, asset.etag)) return c.body(null, 304, headers);
  return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, { ...headers, 'Content-Type': asset.contentType });
}

/**
 * The live map at /map: the page, its scripts and styles (api/map/static), and Leaflet's files from
 * the installed package. Public, like /docs: the page asks for an API key and every request for data
 * goes to the API with it.
 */
export function mapRoutes() {
  const app = new Hono();
  const html = new TextEncoder().encode(mapPage());
  const page: MapAsset = { body: html, contentType: 'text/html; charset=utf-8', etag: etagOf(html), cacheControl: 'no-cache' };

  app.get('/', (c) => send(c, page));
  app.get('/static/:file', async (c) => {
    const asset = ownAsset(c.req.param('file'));
    return asset ? send(c, await asset) : c.notFound();
  });
  app.get('/leaflet/:file', async (c) => {
    const asset = leafletAsset(c.req.param('file'));
    return asset ? send(c, await asset) : c.notFound();
  });
  app.get('/leaflet/images/:file', async (c) => {
    const asset = leafletAsset(c.req.param('file'), true);
    return asset ? send(c, await asset) : c.notFound();
  });
  return app;
}
