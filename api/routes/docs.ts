import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { selfOnlyPolicy } from '../self-only-policy.ts';

// Served from the installed swagger-ui-dist package: the page works with no network access.
const assetsDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * The reference runs only scripts this server serves (no inline script: the page's own start-up is a
 * file too), talks only to this server, and may not be framed (a page that holds a key while it
 * tries requests must not sit inside someone else's). Swagger UI sets inline styles, and draws
 * its icons as data: URIs, so those two are allowed.
 */
export const DOCS_CONTENT_SECURITY_POLICY = selfOnlyPolicy({ style: ["'unsafe-inline'"], img: ['data:'] });

const SECURITY_HEADERS = {
  'Content-Security-Policy': DOCS_CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>fleetcore API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/start.js"></script>
</body>
</html>`;

/**
 * Swagger UI's start-up. A key typed into "Authorize" lives in the page's memory only: with
 * persistAuthorization it would be written to localStorage, where any script of this origin, and
 * anyone at the browser later, could read it.
 */
function startScript(specUrl: string): string {
  return `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  persistAuthorization: false,
  tryItOutEnabled: true,
});
`;
}

/** The interactive API reference at /docs, reading the OpenAPI document the app generates. */
export function docsRoutes(specUrl: string) {
  const app = new Hono();
  const start = startScript(specUrl);
  app.get('/', (c) => c.html(PAGE, 200, SECURITY_HEADERS));
  app.get('/start.js', (c) => c.body(start, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }));
  app.get('/assets/:file', async (c) => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (!type) return c.notFound();
    const body = await readFile(join(assetsDir, file));
    return c.body(body, 200, { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
  });
  return app;
}
