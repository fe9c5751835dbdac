import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../domain/events/event-catalog.ts';
import { MAP_CONTENT_SECURITY_POLICY, mapRoutes } from './map-routes.ts';
import { selfOnlyPolicy } from '../self-only-policy.ts';

const app = mapRoutes();
const get = (path: string, headers: Record<string, string> = {}) => app.request(path, { headers });

describe('the /map page', () => {
  it('is HTML under a self-only Content-Security-Policy, with no inline script or style', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('Content-Security-Policy')).toBe(MAP_CONTENT_SECURITY_POLICY);
    expect(MAP_CONTENT_SECURITY_POLICY).toMatch(/default-src 'none'/);
    expect(MAP_CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Cache-Control')).toBe('no-cache');
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/); // every script is a file
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/https?:\/\//); // nothing from elsewhere
    expect(html).toContain(`data-event-types="${EVENT_TYPES.join(',')}"`);
    expect(html).not.toMatch(/data-tile-/); // no tile server: the offline graticule alone
  });

  it('with a tile server, allows images from its origin alone and hands its template and attribution to the scripts', async () => {
    const tiles = { url: 'https://tile.example.com:8443/osm/{z}/{x}/{y}.png?key=a&style=b', attribution: '© <b>OSM</b> & "friends"' };
    const withTiles = mapRoutes(tiles);
    const res = await withTiles.request('/');
    const policy = res.headers.get('Content-Security-Policy')!;
    expect(policy).toBe(MAP_CONTENT_SECURITY_POLICY.replace("img-src 'self'", "img-src 'self' data: https://tile.example.com:8443"));
    expect(policy).toBe(selfOnlyPolicy({ img: ['data:', 'https://tile.example.com:8443'], framedBySelf: true }));
    expect(policy).not.toMatch(/\*|unsafe/);
    // Scripts and Leaflet's files come under the same policy.
    expect((await withTiles.request('/static/main.js')).headers.get('Content-Security-Policy')).toBe(policy);
    const html = await res.text();
    expect(html).toContain('data-tile-url="https://tile.example.com:8443/osm/{z}/{x}/{y}.png?key=a&amp;style=b"');
    expect(html).toContain('data-tile-attribution="© &lt;b&gt;OSM&lt;/b&gt; &amp; &quot;friends&quot;"');
    expect(html).not.toContain('<b>');
    // The default app is untouched by another one's setting.
    expect((await get('/')).headers.get('Content-Security-Policy')).toBe(MAP_CONTENT_SECURITY_POLICY);
  });

  it('serves every script, style and icon the page names, with its content type', async () => {
    const html = await (await get('/')).text();
    const urls = [...html.matchAll(/(?:src|href)="(\/map\/[^"]+)"/g)].map((m) => m[1]!);
    expect(urls).toEqual(expect.arrayContaining(['/map/leaflet/leaflet.js', '/map/leaflet/leaflet.css', '/map/static/main.js', '/map/static/map.css']));
    for (const url of urls) {
      const res = await get(url.slice('/map'.length));
      expect(res.status, url).toBe(200);
      const type = url.endsWith('.js') ? 'text/javascript; charset=utf-8' : url.endsWith('.css') ? 'text/css; charset=utf-8' : 'image/svg+xml';
      expect(res.headers.get('Content-Type'), url).toBe(type);
    }
  });

  it('serves every module main.js imports, directly or not, and the images leaflet.css refers to', async () => {
    const reached = new Set(['main.js']);
    for (const module of reached) {
      const res = await get(`/static/${module}`);
      expect(res.status, module).toBe(200);
      for (const m of (await res.text()).matchAll(/from '\.\/([a-z-]+\.js)'/g)) reached.add(m[1]!);
    }
    expect([...reached]).toEqual(expect.arrayContaining(['session.js', 'fleet-map.js', 'graticule.js', 'element.js', 'live-events.js']));
    const css = await (await get('/leaflet/leaflet.css')).text();
    for (const image of new Set([...css.matchAll(/url\(images\/([a-z0-9-]+\.png)\)/g)].map((m) => m[1]!))) {
      const res = await get(`/leaflet/images/${image}`);
      expect(res.status, image).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('image/png');
    }
  });

  it('lets the browser revalidate its own files (304) and keep Leaflet for a day', async () => {
    const first = await get('/static/session.js');
    const etag = first.headers.get('ETag')!;
    expect(first.headers.get('Cache-Control')).toBe('no-cache');
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await get('/static/session.js', { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await get('/static/session.js', { 'If-None-Match': '"other"' })).status).toBe(200);
    const leaflet = await get('/leaflet/leaflet.js');
    expect(leaflet.headers.get('Cache-Control')).toBe('public, max-age=86400');
    expect((await leaflet.text()).length).toBeGreaterThan(100_000);
    const page = await get('/');
    expect((await get('/', { 'If-None-Match': page.headers.get('ETag')! })).status).toBe(304);
  });

  it('answers 404, never another file, to unknown names and traversal', async () => {
    for (const path of [
      '/static/../map-routes.ts',
      '/static/..%2Fmap-routes.ts',
      '/static/%2e%2e%2fmap-routes.ts',
      '/static/map-routes.ts',
      '/static/',
      '/static/MAIN.JS',
      '/leaflet/../package.json',
      '/leaflet/..%2Fpackage.json',
      '/leaflet/leaflet-src.js',
      '/leaflet/images/..%2F..%2Fpackage.json',
      '/leaflet/images/leaflet.js',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toMatch(/"name":\s*"leaflet"|mapRoutes/);
    }
  });
});
