import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addUser, curl, launchChromium, openConsole, openPage, sessionOf, signIn, startDemoServer, type DemoServer, type WatchedPage,
} from './support/console-browser.ts';

// The console's Settings pages in a real browser against `fleet serve` with the demo: API keys and
// OAuth clients used by `curl` with the secret shown once, webhooks delivered to a receiver on this
// machine with their log and retries, inviting a user by a one-time link, vehicle groups, the audit
// log, and what a viewer's role leaves out.

let browser: Browser;
let demo: DemoServer;

/** A webhook receiver on 127.0.0.1 that answers `status` and keeps every request. */
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let answer = 204;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/fleet`;
  browser = await launchChromium();
  demo = await startDemoServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await demo?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
}, 60_000);

const clean = (w: WatchedPage) => expect({ external: w.external, refused: w.refused, errors: w.errors }).toEqual({ external: [], refused: [], errors: [] });

async function asOwner(): Promise<WatchedPage> {
  const watched = await openConsole(browser, demo.base);
  await signIn(watched.page, demo.email, demo.password);
  return watched;
}

/** Answers the console's confirmation dialog with `label`. */
async function confirm(page: Page, label: string): Promise<void> {
  await page.locator('dialog').getByRole('button', { name: label, exact: true }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
}

const secretShown = (page: Page) => page.locator('.secret-box input.secret').inputValue();

describe('the console\'s Settings pages', () => {
  it('creates an API key with chosen permissions whose secret, shown once, works with curl until it is revoked', async () => {
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'API keys');
    await page.locator('summary', { hasText: 'Create an API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Dispatch board');
    await page.getByLabel('vehicles:read', { exact: true }).check();
    await page.getByLabel('events:read', { exact: true }).check();
    expect(await page.getByLabel('Mode').inputValue()).toBe('live');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = await secretShown(page);
    expect(key).toMatch(/^fc_live_[A-Za-z0-9]{32}$/);
    const row = page.locator('tbody tr', { hasText: 'Dispatch board' });
    expect(await row.locator('td[data-label="Permissions"]').textContent()).toBe('vehicles:readevents:read');
    expect(await row.locator('td[data-label="Mode"]').textContent()).toBe('live');
    // Made by a session, it outlives the sign-in: no expiry given, none set.
    expect(await row.locator('td[data-label="Expires"]').textContent()).toBe('never');

    expect((await curl(demo.base, key, '/vehicles')).status).toBe(200);
    const outside = await curl(demo.base, key, '/geofences');
    expect(outside.status).toBe(403);
    expect(outside.body.error).toMatch(/geofences:read/);

    await row.getByRole('button', { name: 'Revoke Dispatch board' }).click();
    await confirm(page, 'Revoke');
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toMatch(/^revoked/);
    expect(await row.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    expect(await page.locator('.secret-box').count()).toBe(0);
    expect((await curl(demo.base, key, '/vehicles')).status).toBe(401);

    // Shown once: after a reload the secret is nowhere on the page, only its prefix.
    await page.reload();
    await expect.poll(() => page.locator('#page h1').textContent()).toBe('API keys');
    await page.locator('tbody tr', { hasText: 'Dispatch board' }).waitFor();
    expect(await page.locator('.secret-box').count()).toBe(0);
    const everything = await page.evaluate('document.documentElement.outerHTML + [...document.querySelectorAll("input")].map((i) => i.value).join(" ")') as string;
    expect(everything).not.toContain(key);
    expect(everything).toContain(key.slice(0, 14));
    clean(watched);
    await page.context().close();
  });

  it('makes a test-mode key in the console, which reaches test data only, and revokes it', async () => {
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'API keys');
    await page.locator('summary', { hasText: 'Create an API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Sandbox');
    await page.getByLabel('* every permission except the named-only ones').check();
    expect(await page.getByLabel('vehicles:read', { exact: true }).isDisabled()).toBe(true);
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = await secretShown(page);
    expect(key).toMatch(/^fc_test_/);
    const row = page.locator('tbody tr', { hasText: 'Sandbox' });
    expect(await row.locator('td[data-label="Mode"]').textContent()).toBe('test');
    expect(await row.locator('td[data-label="Permissions"]').textContent()).toBe('*');
    // It sees the demo's test vehicle, and none of the live fleet.
    const vehicles = await curl(demo.base, key, '/vehicles');
    expect(vehicles.status).toBe(200);
    const live = ((await curl(demo.base, demo.key, '/vehicles')).body.data as { id: string }[]).map((v) => v.id);
    expect((vehicles.body.data as { name: string }[]).map((v) => v.name)).toEqual(['Test Truck']);
    expect((vehicles.body.data as { id: string }[]).filter((v) => live.includes(v.id))).toEqual([]);
    await row.getByRole('button', { name: 'Revoke Sandbox' }).click();
    await confirm(page, 'Revoke');
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toMatch(/^revoked/);
    expect((await curl(demo.base, key, '/vehicles')).status).toBe(401);
    clean(watched);
    await page.context().close();
  });

  it('shows the API\'s own words when a key would exceed the role, and a viewer\'s menu leaves out what the role does not grant', async () => {
    const viewer = await addUser(demo, 'viewer');
    const watched = await openConsole(browser, demo.base);
    const { page } = watched;
    await signIn(page, viewer.email, viewer.password);
    const links = await page.locator('#nav a').allTextContents();
    expect(links).toContain('API keys');
    for (const absent of ['Webhooks', 'Users', 'Vehicle groups', 'Audit log']) expect(links).not.toContain(absent);

    // Typed in, the pages say the role does not include them, and offer nothing to press.
    for (const path of ['webhooks', 'users', 'groups', 'audit']) {
      await page.goto(`${demo.base}/console#/${path}`);
      await expect.poll(() => page.locator('#page').textContent()).toContain('Your role does not include this page.');
      expect(await page.locator('#page button').count()).toBe(0);
    }

    // A viewer mints read-only keys (keys:write is every role's, over their own keys); more is refused in the API's words.
    await page.goto(`${demo.base}/console#/keys`);
    await page.locator('summary', { hasText: 'Create an API key' }).click();
    await page.getByLabel('vehicles:write', { exact: true }).waitFor();
    expect(await page.locator('.check', { hasText: 'vehicles:write' }).locator('.badge.bad').textContent()).toBe('not in your role');
    await page.getByLabel('vehicles:write', { exact: true }).check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    await expect.poll(() => page.locator('form[aria-label="Create an API key"] .error').textContent())
      .toBe('A credential cannot grant more than its user\'s role: the viewer role does not grant vehicles:write');
    expect(await page.locator('.secret-box').count()).toBe(0);

    // The API refuses a write made with the viewer's own session (cookie and CSRF token), from the page.
    type Answer = { status: number; error: string };
    const refused = await page.evaluate(`(async () => {
      const session = await (await fetch('/api/v1/auth/session')).json();
      const write = (path, body) => fetch('/api/v1' + path, {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.data.csrfToken }, body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, error: (await r.json()).error }));
      return {
        webhook: await write('/webhooks', { url: 'https://example.com/hook', events: ['*'] }),
        user: await write('/users', { email: 'taken-over@example.test', timezone: 'UTC', role: 'owner' }),
        readOnlyKey: await write('/api-keys', { name: 'reads', permissions: ['vehicles:read'] }),
      };
    })()`) as { webhook: Answer; user: Answer; readOnlyKey: Answer };
    expect(refused.webhook).toMatchObject({ status: 403, error: expect.stringMatching(/webhooks:write/) });
    expect(refused.user).toMatchObject({ status: 403, error: expect.stringMatching(/users:write/) });
    expect(refused.readOnlyKey.status).toBe(201);
    clean(watched);
    await page.context().close();
  });

  it('registers an OAuth client whose secret, shown once, gets tokens until it is revoked', async () => {
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'OAuth clients');
    await page.locator('summary', { hasText: 'Create an OAuth client' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Insurer');
    await page.getByLabel('vehicles:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create OAuth client' }).click();
    const secret = await secretShown(page);
    const row = page.locator('tbody tr', { hasText: 'Insurer' });
    const clientId = (await row.locator('td[data-label="Client id"]').textContent())!;
    expect(clientId).toMatch(/^fcc_/);
    const token = async () => fetch(`${demo.base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    const issued = await token();
    expect(issued.status).toBe(200);
    const { access_token: accessToken } = await issued.json() as { access_token: string };
    expect((await curl(demo.base, accessToken, '/vehicles')).status).toBe(200);
    expect((await curl(demo.base, accessToken, '/geofences')).status).toBe(403);

    await row.getByRole('button', { name: 'Revoke Insurer' }).click();
    await confirm(page, 'Revoke');
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toMatch(/^revoked/);
    expect((await curl(demo.base, accessToken, '/vehicles')).status).toBe(401);
    expect((await token()).status).toBe(401);
    clean(watched);
    await page.context().close();
  });

  it('registers a webhook that the test button reaches, signed with the secret shown once; a failing delivery is logged and retried', async () => {
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'Webhooks');
    await page.locator('summary', { hasText: 'Register a webhook' }).click();
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByLabel('Description').fill('Dispatch receiver');
    await page.getByLabel('vehicle.panic', { exact: true }).check();
    await page.getByLabel('vehicle.geofence.enter', { exact: true }).check();
    await page.getByRole('button', { name: 'Register webhook' }).click();
    const secret = await secretShown(page);
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('tbody tr', { hasText: receiverUrl });
    expect(await row.locator('td[data-label="Events"]').textContent()).toBe('vehicle.geofence.entervehicle.panic');

    answer = 204;
    const before = received.length;
    await row.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(before);
    const ping = received[received.length - 1]!;
    const payload = new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>) as { type: string };
    expect(payload.type).toBe('webhook.test');
    expect(() => new Webhook(`whsec_${Buffer.from('not the secret at all!').toString('base64')}`).verify(ping.body, ping.headers as Record<string, string>)).toThrow();

    // The receiver fails: the delivery shows in the log as it stands, and Retry makes one more attempt now.
    answer = 500;
    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByRole('link', { name: 'Deliveries' }).click();
    const log = page.locator('section[aria-label="Delivery log"]');
    await log.getByRole('heading', { name: `Deliveries to ${receiverUrl}` }).waitFor();
    const failing = log.locator('tbody tr', { hasText: '500' });
    // The first attempt is at once, the next 5 s later; after that none for minutes.
    await expect.poll(async () => {
      await log.getByRole('button', { name: 'Refresh' }).click();
      return failing.locator('td[data-label="Attempts"] summary').textContent().catch(() => null);
    }, { timeout: 30_000, interval: 1_000 }).toBe('2');
    // Each attempt, opened: when, the answer, how long it took.
    await failing.locator('td[data-label="Attempts"] summary').click();
    await expect.poll(() => failing.locator('.attempts li').allTextContents()).toEqual([
      expect.stringMatching(/: 500, \d+ ms$/), expect.stringMatching(/: 500, \d+ ms$/),
    ]);
    expect(await failing.locator('td[data-label="Status"]').textContent()).toBe('pending');
    expect(await log.locator('tbody tr', { hasText: 'succeeded' }).count()).toBe(1);
    const attemptsBefore = received.length;
    await failing.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBe(attemptsBefore + 1);
    await expect.poll(async () => {
      await log.getByRole('button', { name: 'Refresh' }).click();
      return failing.locator('td[data-label="Attempts"] summary').textContent();
    }, { timeout: 15_000 }).toBe('3');
    expect(received[received.length - 1]!.headers['webhook-id']).toBe(received[received.length - 2]!.headers['webhook-id']);

    // A new secret, shown once: deliveries are signed with it (and with the old one for a day).
    answer = 204;
    await row.getByRole('button', { name: 'New secret' }).click();
    await confirm(page, 'Make new secret');
    await expect.poll(() => secretShown(page)).not.toBe(secret);
    const rotated = await secretShown(page);
    expect(rotated).toMatch(/^whsec_/);
    const beforeRotatedPing = received.length;
    await row.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(beforeRotatedPing);
    const signedTwice = received[received.length - 1]!;
    expect((new Webhook(rotated).verify(signedTwice.body, signedTwice.headers as Record<string, string>) as { type: string }).type).toBe('webhook.test');
    expect(String(signedTwice.headers['webhook-signature']).split(' ')).toHaveLength(2);

    // Disable, enable, change, delete.
    await row.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toMatch(/^disabled/);
    expect(await row.getByRole('button', { name: 'Send test' }).isDisabled()).toBe(true);
    await row.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toBe('enabled');
    await row.getByRole('button', { name: 'Edit' }).click();
    const edit = page.locator(`form[aria-label="Change the webhook to ${receiverUrl}"]`);
    await edit.getByLabel('vehicle.panic', { exact: true }).uncheck();
    await edit.getByLabel('Description').fill('Geofences only');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.locator('td[data-label="Events"]').textContent()).toBe('vehicle.geofence.enter');
    expect(await row.locator('td[data-label="Description"]').textContent()).toBe('Geofences only');
    await row.getByRole('button', { name: 'Delete' }).click();
    await confirm(page, 'Delete');
    await expect.poll(() => page.locator('tbody tr', { hasText: receiverUrl }).count()).toBe(0);
    answer = 204;
    clean(watched);
    await page.context().close();
  });

  it('invites a dispatcher, whose one-time link sets a password that signs in to the dispatcher\'s menu; the last owner is not removed', async () => {
    const owner = await asOwner();
    await openPage(owner.page, 'Users');
    await owner.page.locator('summary', { hasText: 'Invite a user' }).click();
    const email = `dispatcher-${Date.now()}@example.test`;
    const form = owner.page.locator('form[aria-label="Invite a user"]');
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Name').fill('Dana Dispatcher');
    await form.getByLabel('Role').selectOption('dispatcher');
    await form.getByLabel('Time zone').fill('America/Bogota');
    await form.getByRole('button', { name: 'Invite' }).click();
    const url = await secretShown(owner.page);
    // Its Copy button puts it on the clipboard, to paste into a message to the new user.
    await owner.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: demo.base });
    await owner.page.locator('.secret-box').getByRole('button', { name: 'Copy' }).click();
    expect(await owner.page.evaluate('navigator.clipboard.readText()')).toBe(url);
    expect(url).toMatch(new RegExp(`^${demo.base.replace(/[.]/g, '\\.')}/map/set-password#token=fsi_`));
    const row = owner.page.locator('tbody tr', { hasText: email });
    expect(await row.locator('select').inputValue()).toBe('dispatcher');
    expect(await row.locator('td[data-label="Name"]').textContent()).toBe('Dana Dispatcher');
    expect(await owner.page.locator('tbody tr', { hasText: demo.email }).locator('td[data-label="Name"]').textContent()).toBe('Demo Dispatcher you');

    const invited = await openConsole(browser, demo.base);
    await invited.page.goto(url);
    await invited.page.getByLabel(/New password/).fill('dispatching all day');
    await invited.page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => invited.page.locator('#set-password-result').textContent()).toContain(`Password set for ${email}`);
    await invited.page.goto(`${demo.base}/console`);
    await signIn(invited.page, email, 'dispatching all day');
    expect(await invited.page.locator('#who').textContent()).toBe('Dana Dispatcher · dispatcher');
    const links = await invited.page.locator('#nav a').allTextContents();
    expect(links).toEqual(expect.arrayContaining(['Overview', 'Vehicles', 'API keys', 'My account']));
    for (const absent of ['Users', 'Audit log', 'Webhooks', 'Vehicle groups']) expect(links).not.toContain(absent);
    // The link worked once.
    const again = await invited.page.request.post(`${demo.base}/api/v1/auth/set-password`, { data: { token: new URLSearchParams(new URL(url).hash.slice(1)).get('token'), password: 'a second try 12345' } });
    expect(again.status()).toBe(400);

    // Changing the role holds at once; removing the account's only owner is refused in the API's words.
    await row.locator('select').selectOption('viewer');
    await confirm(owner.page, 'Change role');
    await expect.poll(() => row.locator('select').inputValue()).toBe('viewer');
    const me = owner.page.locator('tbody tr', { hasText: demo.email });
    await me.getByRole('button', { name: `Remove ${demo.email}` }).click();
    await confirm(owner.page, 'Remove');
    await expect.poll(() => owner.page.locator('#page .error[role="alert"]:not([hidden])').first().textContent())
      .toBe('the account\'s last owner cannot be removed; make another user an owner first');
    expect(await owner.page.locator('tbody tr', { hasText: demo.email }).count()).toBe(1);

    await row.getByRole('button', { name: `Remove ${email}` }).click();
    await confirm(owner.page, 'Remove');
    await expect.poll(() => owner.page.locator('tbody tr', { hasText: email }).count()).toBe(0);
    // Removed, the dispatcher's session ended with them.
    expect((await invited.page.request.get(`${demo.base}/api/v1/auth/session`)).status()).toBe(401);
    for (const w of [owner, invited]) clean(w);
    await owner.page.context().close();
    await invited.page.context().close();
  });

  it('manages a vehicle group: created, a vehicle added and removed, granted to a user and taken back, renamed, deleted', async () => {
    const viewer = await addUser(demo, 'viewer');
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'Vehicle groups');
    const name = `North depot ${Date.now()}`;
    await page.locator('summary', { hasText: 'Create a group' }).click();
    await page.locator('form[aria-label="Create a group"]').getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create group' }).click();
    const detail = page.locator('section[aria-label="The group"]');
    await detail.getByRole('heading', { name }).waitFor();
    const vehicles = (await curl(demo.base, demo.key, '/vehicles')).body.data as { id: string; name: string }[];
    const vehicle = vehicles[0]!;
    await detail.getByLabel('vehicle to add').selectOption(vehicle.id);
    await detail.getByRole('button', { name: 'Add' }).click();
    await detail.getByText(`${vehicle.name} (${vehicle.id})`).waitFor();
    await detail.getByLabel('user to add').selectOption(String(viewer.id));
    await detail.getByRole('button', { name: 'Grant' }).click();
    await detail.getByRole('button', { name: `Revoke A viewer (${viewer.email})` }).waitFor();

    // The viewer now sees that vehicle (and only the vehicles granted to them).
    const seen = await sessionOf(demo.base, viewer.email, viewer.password);
    expect(((await seen('/vehicles')).body.data as { id: string }[]).map((v) => v.id)).toContain(vehicle.id);
    const row = page.locator('tbody tr', { hasText: name });
    expect(await row.locator('td[data-label="Vehicles"]').textContent()).toBe('1');

    await detail.getByRole('button', { name: `Revoke A viewer (${viewer.email})` }).click();
    await expect.poll(() => detail.getByRole('button', { name: /^Revoke A viewer/ }).count()).toBe(0);
    await detail.getByRole('button', { name: `Remove ${vehicle.name} (${vehicle.id})` }).click();
    await expect.poll(() => row.locator('td[data-label="Vehicles"]').textContent()).toBe('0');

    await row.getByRole('button', { name: `Rename ${name}` }).click();
    await page.locator('dialog').getByLabel('New name').fill(`${name} renamed`);
    await confirm(page, 'Rename');
    const renamed = page.locator('tbody tr', { hasText: `${name} renamed` });
    await renamed.waitFor();
    await renamed.getByRole('button', { name: `Delete ${name} renamed` }).click();
    await confirm(page, 'Delete');
    await expect.poll(() => page.locator('tbody tr', { hasText: name }).count()).toBe(0);
    clean(watched);
    await page.context().close();
  });

  it('pages the audit log newest first: who, what, when and from where, with Load more', async () => {
    // Enough entries for more than one page: keys made and revoked by the owner's session.
    const owner = await sessionOf(demo.base, demo.email, demo.password);
    for (let i = 0; i < 28; i++) {
      const made = await owner('/api-keys', { method: 'POST', body: { name: `batch ${i}`, permissions: ['vehicles:read'] } });
      expect(made.status).toBe(201);
      expect((await owner(`/api-keys/${made.body.data.id}`, { method: 'DELETE' })).status).toBe(200);
    }
    const watched = await asOwner();
    const { page } = watched;
    await openPage(page, 'Audit log');
    const rows = page.locator('#page tbody tr');
    await expect.poll(() => rows.count()).toBe(50);
    const first = rows.first();
    expect(await first.locator('td[data-label="What"]').textContent()).toBe('api_key.revoked');
    expect(await first.locator('td[data-label="Who"]').textContent()).toBe(`${demo.email}console (signed in)`);
    expect(await first.locator('td[data-label="From"]').textContent()).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    expect(await first.locator('td[data-label="Details"]').textContent()).toMatch(/^prefix: fc_live_/);
    const total = (await owner('/audit?limit=500')).body.data.length as number;
    expect(total).toBeGreaterThan(50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => rows.count()).toBe(Math.min(total, 100));
    // Newest first throughout, with no entry twice.
    const ids = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-id')))));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(ids.length);
    // Narrowed to one family, from the first page again.
    await page.getByLabel('Show').selectOption({ label: 'users' });
    await expect.poll(async () => [...new Set(await rows.locator('td[data-label="What"]').allTextContents())].sort())
      .toEqual(expect.arrayContaining(['user.created', 'user.sign_in_link_issued']));
    expect((await rows.locator('td[data-label="What"]').allTextContents()).every((a) => a.startsWith('user.'))).toBe(true);
    expect(await page.getByRole('button', { name: 'Load more' }).isVisible()).toBe(false);
    // What earlier tests did is there: the invitation's link among it.
    expect(((await owner('/audit?action=user.sign_in_link_issued')).body.data as unknown[]).length).toBeGreaterThan(0);
    clean(watched);
    await page.context().close();
  });
});
