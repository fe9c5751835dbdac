import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import type { Database } from '../db/schema.ts';
import { createLogger } from '../runtime/logger.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';

let t: TestApp;
let key: string;
let accountId: number;
beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant();
  key = tenant.key;
  accountId = tenant.account.id;
});
afterAll(async () => {
  await t?.close();
});

const TRAVELS = '/api/v1/travels';

const validTravel = () => ({
  vehicle: 'No Such Vehicle',
  startTime: '01/05/2030 08:00',
  waypoints: [{ geofence: 'Depot', expectedArrival: '01/05/2030 09:00' }],
});

/** Posts raw text to /travels with the given content type. */
async function postRaw(body: string, contentType = 'application/json', withKey = true) {
  const res = await t.call(TRAVELS, { key: withKey ? key : undefined, method: 'POST', body, headers: { 'Content-Type': contentType } });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text, headers: res.headers };
}

describe('request bodies', () => {
  it('answers 400 "Malformed JSON in request body" for broken JSON', async () => {
    for (const raw of ['{', '{"vehicle": }', "{'vehicle': 'x'}", 'not json', '{"vehicle":"x",}']) {
      const { status, body } = await postRaw(raw);
      expect(status, raw).toBe(400);
      expectErrorEnvelope(body, 'Malformed JSON in request body');
    }
  });

  it('answers 415 in the envelope for a body that is not JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const { status, body } = await postRaw(JSON.stringify(validTravel()), type);
      expect(status, type).toBe(415);
      expectErrorEnvelope(body);
    }
  });

  it('accepts application/json with a charset parameter', async () => {
    const { status, body } = await postRaw(JSON.stringify(validTravel()), 'application/json; charset=utf-8');
    // Parsed and validated: the request reaches the lookup of the (missing) vehicle.
    expect(status).not.toBe(415);
    expectErrorEnvelope(body, 'Vehicle not found');
  });

  it('answers 413 in the envelope for a body over the limit, and lets one at the limit through', async () => {
    const limit = TEST_CONFIG.bodyLimitBytes;
    const sized = (bytes: number) => {
      const base = JSON.stringify({ ...validTravel(), pad: '' });
      const text = JSON.stringify({ ...validTravel(), pad: 'x'.repeat(bytes - Buffer.byteLength(base)) });
      expect(Buffer.byteLength(text)).toBe(bytes);
      return text;
    };
    const over = await postRaw(sized(limit + 1));
    expect(over.status).toBe(413);
    expectErrorEnvelope(over.body, new RegExp(String(limit)));

    const far = await postRaw(sized(limit * 4));
    expect(far.status).toBe(413);
    expectErrorEnvelope(far.body);

    const at = await postRaw(sized(limit));
    expect(at.status).not.toBe(413);
    // The body was read and validated: the vehicle does not exist.
    expectErrorEnvelope(at.body, 'Vehicle not found');
  });

  it('names the field whose type is wrong', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ ...validTravel(), vehicle: 5 }, /vehicle/],
      [{ ...validTravel(), startTime: 20240501 }, /startTime/],
      [{ ...validTravel(), waypoints: 'Depot' }, /waypoints/],
      [{ ...validTravel(), waypoints: [{ geofence: 7, expectedArrival: '01/05/2030 09:00' }] }, /waypoints\.0\.geofence/],
    ];
    for (const [body, field] of cases) {
      const res = await t.json(TRAVELS, { key, method: 'POST', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorEnvelope(res.body, field);
    }
    const wrong = await t.json(TRAVELS, { key, method: 'POST', body: { ...validTravel(), vehicle: 5 } });
    expect(wrong.body.error).toBe('vehicle must be a string, not number');
  });

  it('names missing fields', async () => {
    const { vehicle: _vehicle, ...noVehicle } = validTravel();
    const res = await t.json(TRAVELS, { key, method: 'POST', body: noVehicle });
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, 'vehicle is required');

    const noWaypointTime = await t.json(TRAVELS, { key, method: 'POST', body: { ...validTravel(), waypoints: [{ geofence: 'Depot' }] } });
    expect(noWaypointTime.status).toBe(400);
    expectErrorEnvelope(noWaypointTime.body, /waypoints\.0\.expectedArrival is required/);
  });

  it('refuses an empty waypoint list with 400', async () => {
    const res = await t.json(TRAVELS, { key, method: 'POST', body: { ...validTravel(), waypoints: [] } });
    expect(res.status).toBe(400);
    expectErrorEnvelope(res.body, /waypoints/);
    expect(res.body.error).toMatch(/at least one/);
  });

  it('answers 400 "Invalid date format" for a date not in dd/MM/yyyy HH:mm', async () => {
    for (const startTime of ['2030-05-01 08:00', '1/5/2030 08:00', '31/02/2030 08:00', '01/05/2030 24:00', '01/05/2030']) {
      const res = await t.json(TRAVELS, { key, method: 'POST', body: { ...validTravel(), startTime } });
      expect(res.status, startTime).toBe(400);
      expectErrorEnvelope(res.body, 'Invalid date format');
    }
  });

  it('answers a JSON body that is not an object with 400, not 500', async () => {
    for (const raw of ['null', '[]', '"travel"', '42', 'true', '{}', '{"waypoints":[null]}', '{"waypoints":[[]]}']) {
      const { status, body } = await postRaw(raw);
      expect(status, raw).toBe(400);
      expectErrorEnvelope(body);
    }
  });
});

describe('routes and parameters', () => {
  it('answers an unknown route with a 404 envelope, inside and outside the API', async () => {
    for (const path of ['/api/v1/nothing-here', '/api/v1/devices', '/nothing', '/api/v2/devices/status']) {
      const { status, body } = await t.json(path, { key });
      expect(status, path).toBe(404);
      expectErrorEnvelope(body, /not found/i);
    }
  });

  it('answers an unsupported method on a known path without a 500', async () => {
    for (const [method, path] of [['PUT', TRAVELS], ['PATCH', '/api/v1/travels/1'], ['POST', '/api/v1/devices/status'], ['DELETE', '/api/v1/geofences']]) {
      const { status, body } = await t.json(path!, { key, method });
      expect(status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(status, `${method} ${path}`).toBeLessThan(500);
      expectErrorEnvelope(body);
    }
  });

  it('answers 400 for a travel id that is not a positive integer', async () => {
    for (const id of ['abc', '-1', '1.5', '9999999999', '1e3']) {
      for (const method of ['GET', 'DELETE']) {
        const { status, body } = await t.json(`/api/v1/travels/${id}`, { key, method });
        expect(status, `${method} ${id}`).toBe(400);
        expectErrorEnvelope(body, /id/);
      }
    }
  });

  it('answers bad report parameters with 400 and a reason', async () => {
    const cases: Array<[string, RegExp]> = [
      ['', /both from and to are required/i],
      ['?from=2024-01-01', /both from and to are required/i],
      ['?to=2024-01-01', /both from and to are required/i],
      ['?from=yesterday&to=2024-01-01', /from/],
      ['?from=2024-01-01&to=2024-13-01', /to/],
      ['?from=2024-01-02&to=2024-01-01', /from must not be after to/],
      ['?from=2020-01-01&to=2024-01-01', /366 days/],
      ['?from=2024-01-01&to=2024-01-02&include=nonsense', /include/],
      ['?from=2024-01-01&to=2024-01-02&include=', /include/],
    ];
    for (const [query, error] of cases) {
      const { status, body } = await t.json(`/api/v1/reports/geofences${query}`, { key });
      expect(status, query).toBe(400);
      expectErrorEnvelope(body, error);
    }
  });

  it('never answers 500 to odd but well-formed requests', async () => {
    const paths = [
      `/api/v1/devices/${'9'.repeat(300)}/status`,
      '/api/v1/devices/%E2%9C%93/status',
      '/api/v1/devices/%25/status',
      "/api/v1/devices/'%20OR%201=1--/status",
      '/api/v1/travels/0',
      '/api/v1/travels/999999999',
      '/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02&deviceIds=,,,',
      '/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02&geofenceIds=abc',
      '/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02&geofenceIds=99999999999999999999',
      '/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02&deviceIds=1&deviceIds=2',
      '/api/v1/reports/geofences?from=2024-02-30&to=2024-03-01',
      '/api/v1/reports/geofences?from=0000-01-01&to=2024-03-01',
    ];
    const failures: string[] = [];
    for (const path of paths) {
      const res = await t.call(path, { key });
      const text = await res.text();
      if (res.status >= 500) failures.push(`${path} -> ${res.status} ${text}`);
      expect(res.headers.get('Content-Type'), path).toMatch(/^application\/json/);
      const body = JSON.parse(text);
      expect(typeof body.success, path).toBe('boolean');
    }
    expect(failures).toEqual([]);
  });
});

describe('NUL bytes in text', () => {
  // PostgreSQL text cannot hold U+0000, so a NUL that reaches a query fails there; the API must refuse it first.
  it('refuses a NUL in a device id, a report device list or a travel name with a 4xx, never a 500', async () => {
    const vehicle = await t.fixtures.device(accountId, { name: 'NUL probe truck' });
    const travel = (patch: object) => ({ ...validTravel(), ...patch });
    const requests: Array<[string, { method?: string; body?: unknown }]> = [
      ['/api/v1/devices/%00/status', {}],
      ['/api/v1/devices/86%00123/status', {}],
      ['/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02&deviceIds=%00', {}],
      [TRAVELS, { method: 'POST', body: travel({ vehicle: 'Truck\u0000' }) }],
      [TRAVELS, { method: 'POST', body: travel({ vehicle: vehicle.name, waypoints: [{ geofence: 'Depot\u0000', expectedArrival: '01/05/2030 09:00' }] }) }],
    ];
    const failures: string[] = [];
    for (const [path, options] of requests) {
      const { status, body } = await t.json(path, { key, ...options });
      if (status < 400 || status >= 500) failures.push(`${options.method ?? 'GET'} ${path} ${JSON.stringify(options.body ?? '')} -> ${status} ${body.error}`);
      else expectErrorEnvelope(body);
    }
    expect(failures).toEqual([]);
  });
});

describe('health', () => {
  it('GET /healthz answers 200 {status: "ok"} without a key', async () => {
    const res = await t.call('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 {status: "ready"} with a migrated, reachable database', async () => {
    const res = await t.call('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready' });
  });

  it('GET /readyz answers 503 without the database\'s own error text, which goes to the log', async () => {
    const lines: string[] = [];
    const log = createLogger('warn', (line) => void lines.push(line));
    const pool = new pg.Pool({ host: '/nonexistent/fleetcore-secret-socket-path', user: 'fleet_admin', max: 1, connectionTimeoutMillis: 1000 });
    pool.on('error', () => undefined);
    const down = createApp({ db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), log, rateLimiter: createMemoryRateLimiter(10, 10_000), config: TEST_CONFIG });
    try {
      const res = await down.request('/readyz');
      expect(res.status).toBe(503);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({ status: 'not ready', reason: 'database unreachable' });
      expect(body).not.toMatch(/nonexistent|secret|ENOENT|fleet_admin/);
      expect(lines.join('\n')).toMatch(/"msg":"not ready".*nonexistent|nonexistent.*"msg":"not ready"/);
    } finally {
      await pool.end();
    }
  });
});

describe('OpenAPI document', () => {
  let doc: any;
  beforeAll(async () => {
    const res = await t.call('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/);
    doc = await res.json();
  });

  const deref = (schema: any): any => {
    if (!schema?.$ref) return schema;
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    expect(name, schema.$ref).toBeDefined();
    const target = doc.components?.schemas?.[name!];
    expect(target, schema.$ref).toBeDefined();
    return deref(target);
  };

  /** The one value a literal schema allows, written as `const` or as a one-element `enum`. */
  const literal = (schema: any): unknown => (schema && 'const' in schema ? schema.const : schema?.enum?.length === 1 ? schema.enum[0] : undefined);

  const OPERATIONS: Array<[string, string]> = [
    ['/devices/status', 'get'],
    ['/devices/{deviceId}/status', 'get'],
    ['/geofences', 'get'],
    ['/reports/geofences', 'get'],
    ['/travels', 'post'],
    ['/travels', 'get'],
    ['/travels/{id}', 'get'],
    ['/travels/{id}', 'delete'],
  ];

  it('is OpenAPI 3.1.0, public, served relative to /api/v1', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toEqual(expect.any(String));
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'bearerAuth', 'oauth2', 'sessionCookie']);
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'fleet_session' });
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.oauth2).toMatchObject({ type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { 'vehicles:read': expect.any(String), '*': expect.any(String) } } } });
  });

  it('describes all eight endpoints, each answering the envelope on 200 and the error envelope on 401', () => {
    for (const [path, method] of OPERATIONS) {
      const op = doc.paths?.[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      const ok = deref(op.responses['200'].content['application/json'].schema);
      expect(Object.keys(ok.properties).sort(), `${method} ${path}`).toEqual(['data', 'error', 'success', 'timestamp']);
      expect(literal(ok.properties.success), `${method} ${path}`).toBe(true);
      const unauthorized = deref(op.responses['401'].content['application/json'].schema);
      expect(literal(unauthorized.properties.success), `${method} ${path}`).toBe(false);
      expect(op.responses['429'], `${method} ${path}`).toBeDefined();
    }
    // Only the API paths, nothing internal like health or docs.
    for (const path of Object.keys(doc.paths)) expect(path).not.toMatch(/healthz|readyz|docs|openapi/);
  });

  it('documents the path parameters and the travel request body', () => {
    const params = (path: string, method: string) => doc.paths[path][method].parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(params('/devices/{deviceId}/status', 'get')).toContain('path:deviceId');
    expect(params('/travels/{id}', 'get')).toContain('path:id');
    expect(params('/reports/geofences', 'get')).toEqual(expect.arrayContaining(['query:from', 'query:to']));
    const body = deref(doc.paths['/travels'].post.requestBody.content['application/json'].schema);
    expect(body.required).toEqual(expect.arrayContaining(['vehicle', 'startTime', 'waypoints']));
  });
});

describe('/docs', () => {
  it('serves an HTML page that loads the OpenAPI document', async () => {
    const res = await t.call('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).toContain('/docs/start.js');
    expect(await (await t.call('/docs/start.js')).text()).toContain('/api/v1/openapi.json');
  });

  it('redirects / to the console', async () => {
    const res = await t.call('/');
    expect([301, 302, 303, 307, 308]).toContain(res.status);
    expect(res.headers.get('Location')).toBe('/console');
  });

  it('serves the Swagger UI assets locally', async () => {
    const js = await t.call('/docs/assets/swagger-ui-bundle.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('Content-Type')).toMatch(/javascript/);
    const text = await js.text();
    expect(text.length).toBeGreaterThan(10_000);
    expect(text).toContain('SwaggerUIBundle');
    const css = await t.call('/docs/assets/swagger-ui.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('Content-Type')).toMatch(/^text\/css/);
    await css.arrayBuffer();
  });

  it('answers 404, never a file outside the assets, to traversal and unknown names', async () => {
    for (const path of [
      '/docs/assets/../package.json',
      '/docs/assets/..%2Fpackage.json',
      '/docs/assets/%2e%2e%2fpackage.json',
      '/docs/assets/..%2F..%2F..%2Fpackage.json',
      '/docs/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
      '/docs/assets/package.json',
      '/docs/assets/index.html',
      '/docs/assets/swagger-ui-bundle.js.map',
      '/docs/assets/',
    ]) {
      const res = await t.call(path);
      const text = await res.text();
      expect(res.status, path).toBe(404);
      expect(text, path).not.toMatch(/"name":\s*"(fleetcore|swagger-ui-dist)"/);
      expectErrorEnvelope(JSON.parse(text));
    }
  });
});
