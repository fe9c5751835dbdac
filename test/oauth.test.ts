import * as oauth from 'oauth4webapi';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../db/schema.ts';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

/**
 * OAuth 2.0 client credentials as an integrator meets it: discovered, asked for tokens, revoked and
 * introspected with oauth4webapi (a client library that follows the RFCs to the letter), over real
 * HTTP, and the tokens used on the API like keys.
 */

const insecure = { [oauth.allowInsecureRequests]: true } as const;

let t: TestApp;
let http: { url: string; close(): Promise<void> };
let as: oauth.AuthorizationServer;
let adminKey: string;
let userId: number;
let mine: Device;
let theirs: Device;
let testMode: Device;

/** A client made through the API with these scopes; its secret comes back once. */
async function newClient(scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await fetch(`${http.url}/api/v1/oauth-clients`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ scopes, ...extra }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 201) throw new Error(`client: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.data.id as number, client: { client_id: body.data.clientId as string }, secret: body.data.clientSecret as string };
}

async function tokenFor(c: Awaited<ReturnType<typeof newClient>>, scope?: string, auth: 'basic' | 'post' = 'basic') {
  const clientAuth = auth === 'basic' ? oauth.ClientSecretBasic(c.secret) : oauth.ClientSecretPost(c.secret);
  const response = await oauth.clientCredentialsGrantRequest(as, c.client, clientAuth, new URLSearchParams(scope === undefined ? {} : { scope }), insecure);
  return oauth.processClientCredentialsResponse(as, c.client, response);
}

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${http.url}/api/v1${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...init.headers } });

/**
 * The RFC 6749 §5.2 error a refused token request answers with, as the library reports it: a body
 * error, or for a 401 with a WWW-Authenticate challenge, the challenge with the response it came on.
 */
async function refusal(promise: Promise<unknown>) {
  const error = (await promise.catch((e: unknown) => e)) as { error?: string; status?: number; response?: Response };
  if (error instanceof oauth.WWWAuthenticateChallengeError) {
    expect(error.cause[0]?.scheme).toBe('basic');
    return { error: ((await error.response.json()) as { error: string }).error, status: error.status };
  }
  return { error: error.error, status: error.status };
}

beforeAll(async () => {
  t = await startTestApp();
  http = await serveOverHttp(t.app);
  const { account, user } = await t.fixtures.tenant();
  userId = user.id;
  adminKey = (await t.fixtures.key(user.id, { permissions: ['*', 'keys:write', 'commands:write', 'audit:read'] })).key;
  mine = await t.fixtures.device(account.id, { userIds: [user.id], name: 'Mine' });
  testMode = await t.fixtures.device(account.id, { userIds: [user.id], mode: 'test', name: 'Test mine' });
  const colleague = await t.fixtures.user(account.id);
  theirs = await t.fixtures.device(account.id, { userIds: [colleague.id], name: 'Theirs' });
  const issuer = new URL(http.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}, 60_000);

afterAll(async () => {
  await http?.close();
  await t?.close();
});

describe('the authorization server metadata (RFC 8414)', () => {
  it('is discovered and validated by an RFC client, and names the endpoints and what they support', () => {
    expect(as).toMatchObject({
      issuer: http.url,
      token_endpoint: `${http.url}/oauth/token`,
      revocation_endpoint: `${http.url}/oauth/revoke`,
      introspection_endpoint: `${http.url}/oauth/introspect`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
    expect(as.scopes_supported).toEqual(expect.arrayContaining(['vehicles:read', 'commands:write', '*']));
  });
});

describe('the token endpoint (RFC 6749 §4.4)', () => {
  it('issues a bearer token with the client\'s scopes, authenticated by HTTP Basic or in the body', async () => {
    const c = await newClient(['devices:read', 'vehicles:read']);
    for (const auth of ['basic', 'post'] as const) {
      const token = await tokenFor(c, undefined, auth);
      expect(token).toMatchObject({ token_type: 'bearer', scope: 'devices:read vehicles:read' });
      expect(token.expires_in).toBeGreaterThan(3500);
      expect(token.expires_in).toBeLessThanOrEqual(3600);
      expect(token.access_token).toMatch(/^fc_at_/);
    }
  });

  it('narrows to the scope asked for, and refuses a scope beyond the client\'s with invalid_scope', async () => {
    const c = await newClient(['devices:read', 'vehicles:read']);
    expect((await tokenFor(c, 'vehicles:read')).scope).toBe('vehicles:read');
    expect(await refusal(tokenFor(c, 'vehicles:read geofences:read'))).toEqual({ error: 'invalid_scope', status: 400 });
    expect(await refusal(tokenFor(c, 'vehicles:fly'))).toEqual({ error: 'invalid_scope', status: 400 });
    const star = await newClient(['*']);
    expect((await tokenFor(star, 'geofences:read events:read')).scope).toBe('geofences:read events:read');
    // * stands for every permission but the ones granted by name.
    expect(await refusal(tokenFor(star, 'commands:write'))).toEqual({ error: 'invalid_scope', status: 400 });
  });

  it('refuses a wrong secret, an unknown client and a revoked one with 401 invalid_client and a Basic challenge', async () => {
    const c = await newClient(['devices:read']);
    expect(await refusal(tokenFor({ ...c, secret: 'fcs_wrong' }))).toEqual({ error: 'invalid_client', status: 401 });
    expect(await refusal(tokenFor({ ...c, client: { client_id: 'fcc_nobody' } }))).toEqual({ error: 'invalid_client', status: 401 });
    const raw = await fetch(`${http.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${c.client.client_id}:nope`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Basic realm="fleetcore"/);
    expect(raw.headers.get('cache-control')).toBe('no-store');
    expect(await raw.json()).toEqual({ error: 'invalid_client', error_description: 'unknown client or wrong secret' });
    await fetch(`${http.url}/api/v1/oauth-clients/${c.id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${adminKey}` } });
    expect(await refusal(tokenFor(c))).toEqual({ error: 'invalid_client', status: 401 });
  });

  it.each([
    ['no grant_type', '', 'invalid_request'],
    ['another grant', 'grant_type=password&username=a&password=b', 'unsupported_grant_type'],
    ['a parameter twice', 'grant_type=client_credentials&scope=devices:read&scope=devices:read', 'invalid_request'],
  ])('answers %s with its RFC 6749 error', async (_what, form, error) => {
    const c = await newClient(['devices:read']);
    const res = await fetch(`${http.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${c.client.client_id}:${c.secret}`).toString('base64')}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toBe(error);
  });

  it('issues a client at most OAUTH_TOKEN_RATE_LIMIT tokens a minute, then 429 with Retry-After; other clients go on', async () => {
    const limited = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG,
      oauthTokenLimiter: createMemoryRateLimiter(3, 60_000),
    });
    const server = await serveOverHttp(limited);
    try {
      const [busy, other] = [await newClient(['devices:read']), await newClient(['devices:read'])];
      const ask = (c: typeof busy) => fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${c.client.client_id}:${c.secret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      for (let i = 0; i < 3; i++) expect((await ask(busy)).status).toBe(200);
      const refused = await ask(busy);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(await refused.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/too many token requests: 3 a minute per client/) });
      expect((await ask(other)).status).toBe(200);
      // A wrong secret for the busy client is a failed authentication, not a use of its allowance.
      const wrong = { ...busy, secret: 'fcs_wrong' };
      expect((await ask(wrong)).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('refuses a JSON body and two ways of authenticating at once with invalid_request', async () => {
    const c = await newClient(['devices:read']);
    const json = await fetch(`${http.url}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ grant_type: 'client_credentials' }) });
    expect([json.status, ((await json.json()) as any).error]).toEqual([400, 'invalid_request']);
    const both = await fetch(`${http.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${c.client.client_id}:${c.secret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: c.client.client_id, client_secret: c.secret }),
    });
    expect([both.status, ((await both.json()) as any).error]).toEqual([400, 'invalid_request']);
  });
});

describe('an access token on the API', () => {
  it('acts as the client\'s user and mode with its scopes as permissions', async () => {
    const c = await newClient(['devices:read', 'vehicles:read']);
    const { access_token } = await tokenFor(c, 'devices:read');
    const status = await api('/devices/status', access_token);
    expect(status.status).toBe(200);
    const ids = ((await status.json()) as any).data.map((d: any) => d.deviceId);
    expect(ids).toContain(mine.imei);
    expect(ids).not.toContain(theirs.imei);
    expect(ids).not.toContain(testMode.imei);
    const refused = await api('/vehicles', access_token);
    expect([refused.status, ((await refused.json()) as any).error]).toEqual([403, 'This API key lacks the vehicles:read permission']);
  });

  it('fails on its next request once revoked (RFC 7009), and is then reported inactive (RFC 7662)', async () => {
    const c = await newClient(['devices:read']);
    const { access_token } = await tokenFor(c);
    const introspected = await oauth.processIntrospectionResponse(as, c.client, await oauth.introspectionRequest(as, c.client, oauth.ClientSecretBasic(c.secret), access_token, insecure));
    expect(introspected).toMatchObject({ active: true, scope: 'devices:read', client_id: c.client.client_id, token_type: 'Bearer', sub: String(userId), iss: http.url });
    expect(introspected.exp! - introspected.iat!).toBe(3600);
    expect((await api('/devices/status', access_token)).status).toBe(200);

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c.client, oauth.ClientSecretBasic(c.secret), access_token, insecure));
    const after = await api('/devices/status', access_token);
    expect([after.status, ((await after.json()) as any).error]).toEqual([401, 'Access token has been revoked']);
    expect((await oauth.processIntrospectionResponse(as, c.client, await oauth.introspectionRequest(as, c.client, oauth.ClientSecretPost(c.secret), access_token, insecure))).active).toBe(false);
    // Revoking an unknown token, or again, is answered 200 all the same.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c.client, oauth.ClientSecretBasic(c.secret), access_token, insecure));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c.client, oauth.ClientSecretBasic(c.secret), 'fc_at_unknown', insecure));
  });

  it('cannot be revoked or read by another user\'s client', async () => {
    const c = await newClient(['devices:read']);
    const { access_token } = await tokenFor(c);
    const other = await t.fixtures.tenant();
    const otherAdmin = (await t.fixtures.key(other.user.id, { permissions: ['*', 'keys:write'] })).key;
    const res = await fetch(`${http.url}/api/v1/oauth-clients`, { method: 'POST', headers: { Authorization: `Bearer ${otherAdmin}`, 'Content-Type': 'application/json' }, body: '{"scopes":["devices:read"]}' });
    const body = (await res.json()) as any;
    const outsider = { client: { client_id: body.data.clientId as string }, secret: body.data.clientSecret as string };
    expect((await oauth.processIntrospectionResponse(as, outsider.client, await oauth.introspectionRequest(as, outsider.client, oauth.ClientSecretBasic(outsider.secret), access_token, insecure))).active).toBe(false);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, outsider.client, oauth.ClientSecretBasic(outsider.secret), access_token, insecure));
    expect((await api('/devices/status', access_token)).status).toBe(200);
  });

  it('fails at once when expired, and with its client revoked', async () => {
    const c = await newClient(['devices:read']);
    const { access_token } = await tokenFor(c);
    await sql`UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE client_id = ${c.id}`.execute(t.database.db);
    const expired = await api('/devices/status', access_token);
    expect([expired.status, ((await expired.json()) as any).error]).toEqual([401, 'Access token has expired; ask POST /oauth/token for a new one']);
    const fresh = await tokenFor(c);
    await fetch(`${http.url}/api/v1/oauth-clients/${c.id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${adminKey}` } });
    expect((await api('/devices/status', fresh.access_token)).status).toBe(401);
  });

  it('opens the event stream through a stream token it made, for as long as it is not revoked', async () => {
    const c = await newClient(['events:read']);
    const { access_token } = await tokenFor(c);
    const streamToken = async () => {
      const made = await api('/events/stream-tokens', access_token, { method: 'POST' });
      expect(made.status).toBe(201);
      return ((await made.json()) as any).data.token as string;
    };
    // Each stream token opens one stream: the second is made before the revocation and used after it.
    const [token, unused] = [await streamToken(), await streamToken()];
    const first = await fetch(`${http.url}/api/v1/events/stream?token=${token}`);
    await first.body?.cancel();
    expect([first.status, first.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c.client, oauth.ClientSecretBasic(c.secret), access_token, insecure));
    const after = await fetch(`${http.url}/api/v1/events/stream?token=${unused}`);
    expect([after.status, ((await after.json()) as any).error]).toEqual([401, 'Access token has been revoked']);
  });

  it('lives no longer than its client', async () => {
    const c = await newClient(['devices:read'], { expiresAt: new Date(Date.now() + 120_000).toISOString() });
    const token = await tokenFor(c);
    expect(token.expires_in).toBeLessThanOrEqual(120);
  });

  it('records what it does as its client in the audit log, and sends commands under its client\'s idempotency keys', async () => {
    const c = await newClient(['*', 'commands:write', 'webhooks:write', 'audit:read']);
    const { access_token } = await tokenFor(c);
    await t.database.db.updateTable('devices').set({ protocol: 'teltonika' }).where('id', '=', mine.id).execute();
    const send = () => api('/commands', access_token, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ deviceId: mine.imei, type: 'siren_on', idempotencyKey: 'oauth-1' }) });
    const first = (await (await send()).json()) as any;
    expect(first.data.issuedBy).toMatchObject({ keyId: null, clientId: c.client.client_id, userId, address: '127.0.0.1' });
    const second = (await (await send()).json()) as any;
    expect(second.data.id).toBe(first.data.id);
    const audit = (await (await api('/audit?action=command.*', access_token)).json()) as any;
    expect(audit.data[0]).toMatchObject({ action: 'command.created', target: { type: 'command', id: first.data.id }, actor: { kind: 'oauth_client', clientId: c.client.client_id, keyId: null }, address: '127.0.0.1' });
  });
});
