import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// What each /webhooks endpoint stores and asks of the workers, with no worker running: deliveries
// stay as the API left them. test/webhooks-api.test.ts follows a ping through the real workers.

let t: TestApp;
let key: string;
let userId: number;
// Never contacted: no worker runs in this file.
const receiverUrl = 'http://127.0.0.1:9/hooks';

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant();
  key = tenant.key;
  userId = tenant.user.id;
});
afterAll(async () => {
  await t?.close();
});

const create = (body: unknown, as = key) => t.json('/api/v1/webhooks', { key: as, method: 'POST', body });

describe('/webhooks', () => {
  // The app with its dispatch recorded.
  const dispatched: string[][] = [];
  const recording = () => createApp({
    db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: TEST_CONFIG,
    webhookDispatch: { deliverSoon: async (ids) => void dispatched.push(ids) },
  });
  const call = async (app: ReturnType<typeof createApp>, path: string, as: string, method = 'POST') => {
    const res = await app.request(path, { method, headers: { Authorization: `Bearer ${as}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const row = (id: number) => t.database.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const delivery = (id: string) => t.database.db.selectFrom('webhook_deliveries').selectAll().where(sql<boolean>`id = ${id}::bigint`).executeTakeFirstOrThrow();
  const logged = async (webhookId: number, status: 'pending' | 'succeeded' | 'failed') => {
    const inserted = await t.database.db
      .insertInto('webhook_deliveries')
      .values({ webhook_id: webhookId, event_id: null, event_type: 'webhook.test', payload: JSON.stringify({ id: 'test_0', type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }), status, attempts: 1, next_attempt_at: status === 'pending' ? new Date(Date.now() + 3_600_000) : null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(inserted.id);
  };

  it('stores events trimmed and once, and refuses blanks and long descriptions', async () => {
    const created = await create({ url: receiverUrl, events: [' vehicle.panic ', 'vehicle.panic', 'travel.*'] });
    expect(created.body.data.events).toEqual(['vehicle.panic', 'travel.*']);
    const blank = await create({ url: receiverUrl, events: ['  '] });
    expect(blank.status).toBe(400);
    expect(blank.body.error).toMatch(/events must name at least one/);
    expect((await t.json(`/api/v1/webhooks/${created.body.data.id}`, { key, method: 'PATCH', body: { events: [''] } })).status).toBe(400);
    expect((await create({ url: receiverUrl, events: ['*'], description: 'x'.repeat(501) })).body.error).toMatch(/description/);
    expect((await create({ url: receiverUrl, events: ['*'], description: 'x'.repeat(500) })).status).toBe(201);
  });

  it('disables through the API without overwriting an earlier reason, and enabling an enabled one keeps its run of failures', async () => {
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    await t.database.db.updateTable('webhooks').set({ consecutive_failures: 3 }).where('id', '=', id).execute();
    await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: true } });
    expect((await row(id)).consecutive_failures).toBe(3);

    const off = await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: false } });
    expect(off.body.data).toMatchObject({ enabled: false, disabledReason: 'disabled through the API' });
    expect(Math.abs(new Date(off.body.data.disabledAt).getTime() - Date.now())).toBeLessThan(60_000);

    await t.database.db.updateTable('webhooks').set({ disabled_reason: 'the receiver answered 410 Gone' }).where('id', '=', id).execute();
    const again = await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: false } });
    expect(again.body.data.disabledReason).toBe('the receiver answered 410 Gone');
  });

  it('queues a test ping: a delivery of its own, due now, handed to the workers', async () => {
    const app = recording();
    const id = (await create({ url: receiverUrl, events: ['vehicle.panic'] })).body.data.id;
    const ping = await call(app, `/api/v1/webhooks/${id}/test`, key);
    expect(ping.status).toBe(202);
    expect(ping.body.data).toMatchObject({ eventId: null, eventType: 'webhook.test', status: 'pending', attempts: 0, lastStatusCode: null });
    expect(dispatched.at(-1)).toEqual([ping.body.data.id]);
    const stored = await delivery(ping.body.data.id);
    expect(stored.payload).toMatchObject({ id: `test_${ping.body.data.id}`, type: 'webhook.test', data: { webhook: { id }, message: expect.any(String) } });
    expect(Math.abs(stored.next_attempt_at!.getTime() - Date.now())).toBeLessThan(60_000);

    await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: false } });
    const refused = await call(app, `/api/v1/webhooks/${id}/test`, key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/disabled/);
  });

  it('pages deliveries newest first with no duplicate and none missed, filtered by status', async () => {
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const ids: string[] = [];
    for (const status of ['succeeded', 'failed', 'pending', 'failed', 'succeeded', 'failed', 'failed'] as const) ids.push(await logged(id, status));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { body }: { body: any } = await t.json(`/api/v1/webhooks/${id}/deliveries?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key });
      seen.push(...body.data.map((d: any) => d.id));
      cursor = body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const failed = await t.json(`/api/v1/webhooks/${id}/deliveries?status=failed&limit=3`, { key });
    expect(failed.body.data.map((d: any) => d.id)).toEqual([ids[6], ids[5], ids[3]]);
    const rest = await t.json(`/api/v1/webhooks/${id}/deliveries?status=failed&limit=3&cursor=${failed.body.next_cursor}`, { key });
    expect(rest.body).toMatchObject({ data: [{ id: ids[1], status: 'failed' }], has_more: false, next_cursor: null });
    const pending = await t.json(`/api/v1/webhooks/${id}/deliveries?status=pending`, { key });
    expect(pending.body.data).toMatchObject([{ id: ids[2], nextAttemptAt: expect.any(String) }]);
  });

  it('retries a failed or pending delivery now, not one that succeeded or of a disabled webhook', async () => {
    const app = recording();
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const failed = await logged(id, 'failed');
    const retried = await call(app, `/api/v1/webhooks/${id}/deliveries/${failed}/retry`, key);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({ id: failed, status: 'pending', attempts: 1 });
    expect(dispatched.at(-1)).toEqual([failed]);
    expect(Math.abs((await delivery(failed)).next_attempt_at!.getTime() - Date.now())).toBeLessThan(60_000);

    // One a worker holds right now keeps its claim, so no second worker sends it alongside.
    const pending = await logged(id, 'pending');
    const claim = new Date(Date.now() + 30_000);
    await t.database.db.updateTable('webhook_deliveries').set({ claimed_until: claim }).where(sql<boolean>`id = ${pending}::bigint`).execute();
    expect((await call(app, `/api/v1/webhooks/${id}/deliveries/${pending}/retry`, key)).status).toBe(202);
    expect((await delivery(pending)).claimed_until!.getTime()).toBe(claim.getTime());

    const succeeded = await logged(id, 'succeeded');
    expect((await call(app, `/api/v1/webhooks/${id}/deliveries/${succeeded}/retry`, key)).status).toBe(409);
    // Another webhook's delivery is not found under this one.
    const other = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    expect((await call(app, `/api/v1/webhooks/${other}/deliveries/${failed}/retry`, key)).status).toBe(404);
    expect((await t.json(`/api/v1/webhooks/${other}/deliveries/${failed}`, { key })).status).toBe(404);

    await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: false } });
    const count = dispatched.length;
    const refused = await call(app, `/api/v1/webhooks/${id}/deliveries/${failed}/retry`, key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/disabled/);
    expect(dispatched.length).toBe(count);
  });

  it('refuses cursors it did not hand out and ids out of range with 400', async () => {
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const cursor = (list: string, n: string) => Buffer.from(`${list}:${n}`).toString('base64url');
    for (const path of [
      '/api/v1/webhooks?cursor=not*a*cursor',
      `/api/v1/webhooks?cursor=${cursor('deliveries', '5')}`,
      `/api/v1/webhooks?cursor=${cursor('webhooks', '2147483648')}`,
      `/api/v1/webhooks/${id}/deliveries?cursor=${cursor('webhooks', '5')}`,
      `/api/v1/webhooks/${id}/deliveries?cursor=${cursor('deliveries', '9999999999999999999')}`,
      `/api/v1/webhooks/${id}/deliveries/9999999999999999999`,
      '/api/v1/webhooks/2147483648',
    ]) {
      const { status, body } = await t.json(path, { key });
      expect({ path, status }).toEqual({ path, status: 400 });
      expect(body).toMatchObject({ success: false, data: null, error: expect.any(String) });
    }
  });

  it('answers 404 for another account\'s webhook everywhere, and lists only the key\'s own', async () => {
    const mine = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const failed = await logged(mine, 'failed');
    const stranger = await t.fixtures.tenant();
    for (const [method, path, body] of [
      ['GET', `/api/v1/webhooks/${mine}`], ['PATCH', `/api/v1/webhooks/${mine}`, { enabled: false }], ['DELETE', `/api/v1/webhooks/${mine}`],
      ['POST', `/api/v1/webhooks/${mine}/rotate-secret`], ['POST', `/api/v1/webhooks/${mine}/test`], ['GET', `/api/v1/webhooks/${mine}/deliveries`],
      ['GET', `/api/v1/webhooks/${mine}/deliveries/${failed}`], ['POST', `/api/v1/webhooks/${mine}/deliveries/${failed}/retry`],
    ] as Array<[string, string, unknown?]>) {
      expect({ method, path, status: (await t.json(path, { key: stranger.key, method, body })).status }).toEqual({ method, path, status: 404 });
    }
    expect((await t.json('/api/v1/webhooks', { key: stranger.key })).body).toEqual({ data: [], has_more: false, next_cursor: null });
    expect(await row(mine)).toMatchObject({ enabled: true });
    expect((await delivery(failed)).status).toBe('failed');
  });

  it('deletes a webhook with its delivery log', async () => {
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const logId = await logged(id, 'failed');
    const deleted = await t.json(`/api/v1/webhooks/${id}`, { key, method: 'DELETE' });
    expect(deleted).toMatchObject({ status: 200, body: { success: true, data: { id, deleted: true } } });
    expect((await t.json(`/api/v1/webhooks/${id}/deliveries`, { key })).status).toBe(404);
    expect(await t.database.db.selectFrom('webhook_deliveries').select('id').where(sql<boolean>`id = ${logId}::bigint`).execute()).toEqual([]);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key, method: 'DELETE' })).status).toBe(404);
  });

  it('needs webhooks:read to read and webhooks:write to change', async () => {
    const id = (await create({ url: receiverUrl, events: ['*'] })).body.data.id;
    const devicesOnly = (await t.fixtures.key(userId, { permissions: ['devices:read'] })).key;
    const readOnly = (await t.fixtures.key(userId, { permissions: ['webhooks:read'] })).key;
    for (const path of ['/api/v1/webhooks', `/api/v1/webhooks/${id}`, `/api/v1/webhooks/${id}/deliveries`]) {
      const refused = await t.json(path, { key: devicesOnly });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/webhooks:read/);
    }
    for (const [method, path, body] of [
      ['POST', '/api/v1/webhooks', { url: receiverUrl, events: ['*'] }], ['PATCH', `/api/v1/webhooks/${id}`, { enabled: false }],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`], ['POST', `/api/v1/webhooks/${id}/test`],
    ] as Array<[string, string, unknown?]>) {
      expect({ method, path, status: (await t.json(path, { key: readOnly, method, body })).status }).toEqual({ method, path, status: 403 });
    }
    expect(await row(id)).toMatchObject({ enabled: true });
  });

  it('needs events:read besides webhooks:write to subscribe: a key that cannot read events cannot receive them', async () => {
    const id = (await create({ url: receiverUrl, events: ['vehicle.panic'] })).body.data.id;
    await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: false } });
    const blind = (await t.fixtures.key(userId, { permissions: ['webhooks:read', 'webhooks:write'] })).key;
    for (const [method, path, body] of [
      ['POST', '/api/v1/webhooks', { url: receiverUrl, events: ['*'] }],
      ['PATCH', `/api/v1/webhooks/${id}`, { events: ['*'] }],
      ['PATCH', `/api/v1/webhooks/${id}`, { enabled: true }],
      // Pointing a webhook elsewhere hands its events to a receiver of the key's choosing.
      ['PATCH', `/api/v1/webhooks/${id}`, { url: 'http://127.0.0.1:10/elsewhere' }],
    ] as Array<[string, string, unknown]>) {
      const refused = await t.json(path, { key: blind, method, body });
      expect({ method, body, status: refused.status }).toEqual({ method, body, status: 403 });
      expect(refused.body.error).toMatch(/lacks the events:read permission/);
    }
    expect(await row(id)).toMatchObject({ events: ['vehicle.panic'], enabled: false, url: receiverUrl });
    // What subscribes nobody to anything stays open to it: a description, disabling, deleting.
    expect((await t.json(`/api/v1/webhooks/${id}`, { key: blind, method: 'PATCH', body: { description: 'quiet' } })).status).toBe(200);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key: blind, method: 'PATCH', body: { enabled: false } })).status).toBe(200);
    const reader = (await t.fixtures.key(userId, { permissions: ['webhooks:write', 'events:read'] })).key;
    expect((await t.json(`/api/v1/webhooks/${id}`, { key: reader, method: 'PATCH', body: { events: ['*'], enabled: true } })).status).toBe(200);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key: blind, method: 'DELETE' })).status).toBe(200);
  });

  it('keeps a user to WEBHOOKS_PER_USER webhooks per mode, answering 409 for one more', async () => {
    const tenant = await t.fixtures.tenant();
    const mine = (as: string) => create({ url: receiverUrl, events: ['*'] }, as);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await mine(tenant.key);
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    const over = await mine(tenant.key);
    expect(over.status).toBe(409);
    expect(over.body.error).toMatch(/at most 20 webhooks.*delete one/);
    // Each user and mode has its own allowance.
    const colleague = await t.fixtures.user(tenant.account.id);
    expect((await mine((await t.fixtures.key(colleague.id)).key)).status).toBe(201);
    expect((await mine((await t.fixtures.key(tenant.user.id, { mode: 'test' })).key)).status).toBe(201);
    // Deleting one makes room for one.
    expect((await t.json(`/api/v1/webhooks/${ids[0]}`, { key: tenant.key, method: 'DELETE' })).status).toBe(200);
    expect((await mine(tenant.key)).status).toBe(201);
    expect((await mine(tenant.key)).status).toBe(409);
  });

  it('holds to the limit when requests race for the last places, and takes its own limit', async () => {
    const tenant = await t.fixtures.tenant();
    const app = createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: { ...TEST_CONFIG, webhooksPerUser: 3 } });
    const post = async () => {
      const res = await app.request('/api/v1/webhooks', {
        method: 'POST', headers: { Authorization: `Bearer ${tenant.key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ url: receiverUrl, events: ['*'] }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect((await post()).status).toBe(201);
    const raced = await Promise.all(Array.from({ length: 6 }, post));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409, 409]);
    expect(raced.find((r) => r.status === 409)!.body.error).toMatch(/at most 3 webhooks/);
    const stored = await t.database.db.selectFrom('webhooks').select('id').where('user_id', '=', tenant.user.id).execute();
    expect(stored).toHaveLength(3);
  });
});
