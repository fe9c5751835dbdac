import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { hashPassword } from '../api/auth/password-hash.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { setPasswordHash } from '../db/user-passwords.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { serveOverHttp } from './support/http-server.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The live map signed in by email and password in a real browser (Debian's chromium): no key pasted,
// the event stream opened by the session cookie, and the session kept across a reload.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browser: Browser | undefined;
let database: TestDatabase;
let server: { url: string; close(): Promise<void> };
let email = '';

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: install Debian's package or set CHROMIUM_PATH`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  database = await openTestDatabase();
  const f = fixtures(database.db);
  const account = await f.account();
  const user = await f.user(account.id);
  email = user.email;
  await setPasswordHash(database.db, user.id, await hashPassword('map password 1'));
  await f.device(account.id, { name: 'Truck 1', userIds: [user.id] });
  const app = createApp({ db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG });
  server = await serveOverHttp(app);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await database?.destroy();
});

describe('live map signed in', () => {
  it('signs in with email and password, streams events by the cookie, stays signed in across a reload, and signs out', async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${server.url}/map`);
    await page.locator('#sign-in-email').fill(email);
    await page.locator('#sign-in-password').fill('wrong password');
    await page.locator('#sign-in-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toBe('Email or password is wrong');

    await page.locator('#sign-in-password').fill('map password 1');
    await page.locator('#sign-in-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#app').isVisible(), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: 15_000 }).toBe('live');
    await expect.poll(() => page.locator('#vehicle-list li').count(), { timeout: 15_000 }).toBe(1);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'fleet_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });

    await page.reload();
    await expect.poll(() => page.locator('#connection').getAttribute('data-state'), { timeout: 15_000 }).toBe('live');
    expect(await page.locator('#login').isVisible()).toBe(false);

    await page.locator('#logout').click();
    await expect.poll(() => page.locator('#login').isVisible()).toBe(true);
    await expect.poll(async () => (await page.request.get(`${server.url}/api/v1/vehicles`)).status()).toBe(401);
    expect(errors).toEqual([]);
    await page.close();
  });
});
