import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMED_ONLY_PERMISSIONS, PERMISSIONS } from '../domain/access/permissions.ts';
import { permissionOf } from '../api/auth/require-permission.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * Every route the app serves either declares the permission its key needs, or is public on purpose
 * and listed here with the reason. A new endpoint without requirePermission fails this test, so it
 * cannot ship open.
 */
const PUBLIC: Record<string, string> = {
  'GET /healthz': 'liveness, for load balancers',
  'GET /readyz': 'readiness, for load balancers',
  'GET /metrics': 'Prometheus scrapes without credentials; counts and timings only (METRICS_PORT moves it off the public port)',
  'GET /': 'redirects to the console',
  'GET /docs': 'the API reference page',
  'GET /docs/assets/:file': 'the API reference page\'s scripts and styles',
  'GET /docs/start.js': 'the API reference page\'s start-up script',
  'GET /map': 'the live map page: it asks for an API key and sends it only to the API',
  'GET /map/static/:file': 'the live map\'s scripts, styles and icon',
  'GET /map/leaflet/:file': 'the live map\'s Leaflet library, from the installed package',
  'GET /map/leaflet/images/:file': 'Leaflet\'s images, which its stylesheet names',
  'GET /console': 'the console page: it signs in by email and password and sends data requests only to the API',
  'GET /console/static/:file': 'the console\'s scripts and styles',
  'GET /console/vendor/:file': 'Leaflet-Geoman (drawing on the map), from the installed package',
  'GET /console/notification-worker.js': 'the console\'s web push service worker, served at the console\'s root so its scope covers the console',
  'GET /map/set-password': 'the page of a one-time link to set a password; the token is in its fragment',
  'POST /api/v1/auth/sign-in': 'signing in: checks the email and password itself, slowed per email and address',
  'POST /api/v1/auth/set-password': 'checks the one-time token itself',
  'POST /api/v1/auth/setup': 'the first account\'s setup: checks the one-time token the server printed, and works only while no account exists',
  'GET /api/v1/openapi.json': 'the OpenAPI document',
  'POST /oauth/token': 'OAuth 2.0: authenticates the client itself (RFC 6749 §2.3)',
  'POST /oauth/revoke': 'OAuth 2.0: authenticates the client itself (RFC 7009)',
  'POST /oauth/introspect': 'OAuth 2.0: authenticates the client itself (RFC 7662)',
  'GET /.well-known/oauth-authorization-server': 'OAuth 2.0 metadata (RFC 8414), public by definition',
};

/** Routes any valid credential may call, for its own user only: authenticated, but needing no permission. */
const ANY_CREDENTIAL: Record<string, string> = {
  'GET /api/v1/users/me': 'the caller\'s own user',
  'PATCH /api/v1/users/me': 'the caller\'s own name and timezone',
  'GET /api/v1/auth/session': 'the caller\'s own session',
  'POST /api/v1/auth/sign-out': 'ends the caller\'s own session',
  'POST /api/v1/auth/sign-out-everywhere': 'ends the caller\'s own sessions',
  'GET /api/v1/auth/sessions': 'the caller\'s own sessions',
  'DELETE /api/v1/auth/sessions/:id': 'ends one of the caller\'s own sessions',
  'POST /api/v1/auth/password': 'changes the caller\'s own password, given the current one',
  'GET /api/v1/users/me/notification-channels': 'the caller\'s own notification addresses and browsers',
  'PATCH /api/v1/users/me/notification-channels': 'the caller\'s own notification addresses and mute',
  'POST /api/v1/users/me/push-subscriptions': 'subscribes the caller\'s own browser',
  'DELETE /api/v1/users/me/push-subscriptions/:id': 'unsubscribes one of the caller\'s own browsers',
  'GET /api/v1/users/me/report-subscriptions': 'the caller\'s own report emails',
  'DELETE /api/v1/users/me/report-subscriptions/:id': 'ends one of the caller\'s own report emails',
};

/** Permissions a handler checks on what the request asks for, beyond its route's own. */
const IN_HANDLER: Record<string, string> = {
  'commands:custom': 'POST /commands (commands:write) asks for it too when the type is custom',
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('every route', () => {
  it('declares its permission, or is public on purpose', () => {
    const routes = t.app.routes.filter((r) => r.method !== 'ALL');
    const byRoute = new Map<string, string | undefined>();
    for (const r of routes) {
      const id = `${r.method} ${r.path}`;
      byRoute.set(id, byRoute.get(id) ?? permissionOf(r.handler));
    }
    const open = [...byRoute].filter(([id, permission]) => !permission && !(id in PUBLIC) && !(id in ANY_CREDENTIAL)).map(([id]) => id);
    expect(open).toEqual([]);
    // The list stays true: a public route that now declares a permission, or no longer exists, is taken off.
    for (const id of Object.keys(PUBLIC)) {
      expect(byRoute.has(id), `${id} is listed as public but not served`).toBe(true);
      expect(byRoute.get(id), `${id} is listed as public but declares a permission`).toBeUndefined();
    }
    // Each permission of the catalog guards at least one route, and every declared one is in the catalog.
    const declared = new Set([...byRoute.values()].filter((p): p is string => p !== undefined));
    expect([...declared].filter((p) => !(PERMISSIONS as readonly string[]).includes(p))).toEqual([]);
    expect(PERMISSIONS.filter((p) => !declared.has(p) && !(p in IN_HANDLER))).toEqual([]);
  });

  it('guards maintenance with maintenance:read and maintenance:write, which vehicles:* does not grant', async () => {
    const { user } = await t.fixtures.tenant();
    const vehicles = (await t.fixtures.key(user.id, { permissions: ['vehicles:read', 'vehicles:write'] })).key;
    const reader = (await t.fixtures.key(user.id, { permissions: ['maintenance:read'] })).key;
    const lacks = (permission: string) => ({ status: 403, body: { error: expect.stringMatching(new RegExp(`^This API key lacks the ${permission} permission`)) } });
    for (const path of ['/api/v1/maintenance', '/api/v1/maintenance/1', '/api/v1/maintenance/1/services', '/api/v1/reports/maintenance']) {
      expect(await t.json(path, { key: vehicles }), path).toMatchObject(lacks('maintenance:read'));
      expect((await t.json(path, { key: reader })).status, path).not.toBe(403);
    }
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/maintenance', {}], ['PATCH', '/api/v1/maintenance/1', {}], ['DELETE', '/api/v1/maintenance/1', undefined], ['POST', '/api/v1/maintenance/1/services', {}],
    ];
    for (const [method, path, body] of writes) {
      expect(await t.json(path, { key: reader, method, body }), `${method} ${path}`).toMatchObject(lacks('maintenance:write'));
    }
  });

  it('guards vehicle groups with users:read and users:write, which * and vehicles:write do not grant', async () => {
    const { user } = await t.fixtures.tenant();
    const star = (await t.fixtures.key(user.id, { permissions: ['*', 'vehicles:write'] })).key;
    const reader = (await t.fixtures.key(user.id, { permissions: ['users:read'] })).key;
    const lacks = (permission: string) => ({ status: 403, body: { error: expect.stringMatching(new RegExp(`^This API key lacks the ${permission} permission`)) } });
    for (const path of ['/api/v1/groups', '/api/v1/groups/1']) {
      expect(await t.json(path, { key: star }), path).toMatchObject(lacks('users:read'));
      expect((await t.json(path, { key: reader })).status, path).not.toBe(403);
    }
    const writes: Array<[string, string, unknown]> = [['POST', '/api/v1/groups', {}], ['PATCH', '/api/v1/groups/1', {}], ['DELETE', '/api/v1/groups/1', undefined]];
    for (const [method, path, body] of writes) {
      expect(await t.json(path, { key: reader, method, body }), `${method} ${path}`).toMatchObject(lacks('users:write'));
      expect(await t.json(path, { key: star, method, body }), `${method} ${path}`).toMatchObject(lacks('users:write'));
    }
  });

  it('guards photos with media:read, which vehicles:read does not grant, for the list and the bytes', async () => {
    const { user } = await t.fixtures.tenant();
    const vehicles = (await t.fixtures.key(user.id, { permissions: ['vehicles:read'] })).key;
    const reader = (await t.fixtures.key(user.id, { permissions: ['media:read'] })).key;
    for (const path of ['/api/v1/media?vehicleId=356307042441013', '/api/v1/media/1']) {
      expect(await t.json(path, { key: vehicles }), path).toMatchObject({ status: 403, body: { error: expect.stringMatching(/^This API key lacks the media:read permission/) } });
      expect((await t.json(path, { key: reader })).status, path).toBe(404);
    }
  });

  it('answers 403 naming the permission for a key without it, and * lacks only the named ones', async () => {
    const { user } = await t.fixtures.tenant();
    const star = (await t.fixtures.key(user.id, { permissions: ['*'] })).key;
    const starAndCommands = (await t.fixtures.key(user.id, { permissions: ['*', 'commands:write'] })).key;
    const requests: Record<string, { key: string; path: string; method: string; body?: unknown }> = {
      'commands:write': { key: star, path: '/api/v1/commands', method: 'POST', body: {} },
      'commands:custom': { key: starAndCommands, path: '/api/v1/commands', method: 'POST', body: { deviceId: '356307042441013', type: 'custom', text: 'getinfo' } },
      'keys:write': { key: star, path: '/api/v1/api-keys', method: 'POST', body: {} },
      'audit:read': { key: star, path: '/api/v1/audit', method: 'GET' },
      'users:read': { key: star, path: '/api/v1/users', method: 'GET' },
      'users:write': { key: star, path: '/api/v1/users', method: 'POST', body: {} },
    };
    expect(Object.keys(requests).sort()).toEqual([...NAMED_ONLY_PERMISSIONS].sort());
    for (const permission of NAMED_ONLY_PERMISSIONS) {
      const { path, ...request } = requests[permission]!;
      const res = await t.json(path, request);
      expect(res).toMatchObject({ status: 403, body: { error: expect.stringMatching(new RegExp(`^This API key lacks the ${permission} permission`)) } });
    }
  });
});
