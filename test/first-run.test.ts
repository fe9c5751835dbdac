import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { issueSetupToken, SETUP_TOKEN_LIFETIME_MS } from '../api/auth/first-run-setup.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { openFirstRun } from '../cli/server/first-run.ts';
import { countAccounts } from '../db/accounts.ts';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { silentLogger } from '../runtime/logger.ts';
import { launchChromium, openConsole } from './support/console-browser.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { serveOverHttp } from './support/http-server.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A server started on a database with no account and no demo: the one-time link it prints opens the
// console's setup form, which creates the first account and its owner, signed in, with no shell.

const body = (token: string, email = 'owner@first.test') => ({
  token, accountName: 'First Fleet', email, name: 'First Owner', timezone: 'Europe/Madrid', password: 'first owner password',
});

type Served = { url: string; close(): Promise<void> };
const appOn = (db: DatabaseHandle['db']) => createApp({
  db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG, authFailureLimiter: createMemoryRateLimiter(4, 60_000),
});
// Over a real socket: the slowdown counts per client address.
const postTo = (http: Served, payload: unknown) =>
  fetch(`${http.url}/api/v1/auth/setup`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
const tokenIn = (lines: string[] | undefined) => /#setup=(fst_[A-Za-z0-9_-]+)/.exec(lines!.join('\n'))![1]!;

describe('POST /auth/setup', () => {
  let database: TestDatabase;
  let http: Served;
  const post = (payload: unknown) => postTo(http, payload);
  const tokensStored = async () => (await database.db.selectFrom('first_run_tokens').select('token_hash').execute()).length;

  beforeAll(async () => {
    database = await openTestDatabase();
    http = await serveOverHttp(appOn(database.db));
  }, 120_000);
  afterAll(async () => {
    await http?.close();
    await database?.destroy();
  });

  it('is closed (404) until the server opens it, refuses a wrong token (403), then a wrong password, and works once', async () => {
    expect(await countAccounts(database.db)).toBe(0);
    expect((await post(body('fst_anything'))).status).toBe(404);

    const token = await issueSetupToken(database.db);
    // Only its hash is stored.
    const stored = await database.db.selectFrom('first_run_tokens').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(token);
    const wrong = await post(body(`${token}x`));
    expect(wrong.status).toBe(403);
    expect(((await wrong.json()) as { error: string }).error).toMatch(/not the one the server printed/);
    const short = await post({ ...body(token), password: 'short' });
    expect(short.status).toBe(400);
    expect((await post({ ...body(token), timezone: 'Mars/Olympus' })).status).toBe(400);
    expect(await countAccounts(database.db)).toBe(0);

    const created = await post(body(token));
    expect(created.status).toBe(201);
    expect(((await created.json()) as { data: unknown }).data).toMatchObject({ accountId: expect.any(Number), userId: expect.any(Number), email: 'owner@first.test' });
    const owner = await database.db.selectFrom('users').selectAll().where('email', '=', 'owner@first.test').executeTakeFirstOrThrow();
    expect(owner).toMatchObject({ role: 'owner', timezone: 'Europe/Madrid', name: 'First Owner' });

    // Used: the same token, or any other, finds no setup open any more.
    expect((await post(body(token, 'second@first.test'))).status).toBe(404);
    expect(await countAccounts(database.db)).toBe(1);
    expect(await tokensStored()).toBe(0);

    const signedIn = await fetch(`${http.url}/api/v1/auth/sign-in`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'owner@first.test', password: 'first owner password' }),
    });
    expect(signedIn.status).toBe(200);
  });

  it('creates nothing when an account appeared meanwhile (409), and closes', async () => {
    const token = await issueSetupToken(database.db);
    const answer = await post(body(token, 'late@first.test'));
    expect(answer.status).toBe(409);
    expect(await tokensStored()).toBe(0);
    expect((await post(body(token, 'late@first.test'))).status).toBe(404);
  });

  it('slows down an address guessing tokens (429 with Retry-After)', async () => {
    await issueSetupToken(database.db);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post(body(`fst_guess_${i}`))).status);
    // The first test's one wrong token counts too: four a minute per address.
    expect(statuses.slice(0, 3)).toEqual([403, 403, 403]);
    expect(statuses.at(-1)).toBe(429);
  });
});

// Several API processes on one database (behind a load balancer, or `fleet serve --processes N`): each
// its own pool and its own app, as separate processes have; only the database is shared.
describe('a setup link, through two API processes of one database', () => {
  const opened: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of opened.reverse()) await close();
  });

  async function twoProcesses() {
    const database = await openTestDatabase();
    opened.push(() => database.destroy());
    const other = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '', embedded: 'share' });
    opened.push(() => other.close());
    const nodes = [{ db: database.db, http: await serveOverHttp(appOn(database.db)) }, { db: other.db, http: await serveOverHttp(appOn(other.db)) }] as const;
    for (const node of nodes) opened.push(() => node.http.close());
    const users = async () => (await database.db.selectFrom('users').select('email').execute()).map((u) => u.email);
    return { database, nodes, users };
  }

  it('takes the link one process printed at the other, once; a second use at either is refused', async () => {
    const { database, nodes: [a, b], users } = await twoProcesses();
    // A link printed more than the lifetime ago no longer works.
    const stale = await issueSetupToken(a.db, new Date(Date.now() - SETUP_TOKEN_LIFETIME_MS - 60_000));
    expect((await postTo(b.http, body(stale))).status).toBe(404);
    const token = tokenIn(await openFirstRun(a.db, a.http.url));
    expect((await postTo(b.http, body(stale))).status).toBe(403);

    const created = await postTo(b.http, body(token));
    expect(created.status).toBe(201);
    expect((await postTo(b.http, body(token, 'again@first.test'))).status).toBe(404);
    expect((await postTo(a.http, body(token, 'again@first.test'))).status).toBe(404);
    expect(await countAccounts(database.db)).toBe(1);
    expect(await users()).toEqual(['owner@first.test']);
    // And neither process opens a setup again.
    expect(await openFirstRun(a.db, a.http.url)).toBeUndefined();
    expect(await openFirstRun(b.db, b.http.url)).toBeUndefined();
  }, 120_000);

  it('lets only the first of several uses at once, at both processes, make an account', async () => {
    const { database, nodes: [a, b], users } = await twoProcesses();
    const fromA = tokenIn(await openFirstRun(a.db, a.http.url));
    const fromB = tokenIn(await openFirstRun(b.db, b.http.url));
    const answers = await Promise.all([
      postTo(b.http, body(fromA, 'one@first.test')), postTo(a.http, body(fromB, 'two@first.test')),
      postTo(a.http, body(fromA, 'three@first.test')), postTo(b.http, body(fromB, 'four@first.test')),
    ]);
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    // The others find the account made (409), or, checking after it was committed, no setup open (404).
    expect(statuses.filter((status) => status !== 201).every((status) => status === 409 || status === 404), String(statuses)).toBe(true);
    expect(await countAccounts(database.db)).toBe(1);
    expect(await users()).toHaveLength(1);
    for (const [node, token] of [[a, fromA], [b, fromA], [a, fromB], [b, fromB]] as const) {
      expect((await postTo(node.http, body(token, 'late@first.test'))).status).toBe(404);
    }
  }, 120_000);
});

describe('the first start, in a browser', () => {
  let browser: Browser;
  let fresh: FreshDatabase;
  let server: Serving;

  beforeAll(async () => {
    browser = await launchChromium();
    fresh = await freshDatabase();
    server = await serve({ ...fresh.env, PORT: '0', DEMO_SEED: 'false', DEMO_SIMULATE: 'false', TELTONIKA_PORT: String(await freePort()) }, /#setup=fst_[A-Za-z0-9_-]+/);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    server?.process.kill('SIGTERM');
    await server?.exited;
    await fresh?.destroy();
  }, 60_000);

  it('goes from the printed link to a signed-in owner whose API key works, with no shell', async () => {
    const link = /(http\S+\/console#setup=fst_[A-Za-z0-9_-]+)/.exec(server.output())![1]!.replace('//localhost:', '//127.0.0.1:');
    const base = new URL(link).origin;
    // The console's sign-in page is open; the link is pasted into the same tab.
    const { page, external, refused, errors } = await openConsole(browser, base);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.goto(link);
    const form = page.locator('#setup-form');
    await form.waitFor({ state: 'visible' });
    expect(await page.locator('#sign-in').isVisible()).toBe(false);
    await form.getByLabel('Account name').fill('First Fleet');
    await form.getByLabel('Your name').fill('First Owner');
    await form.getByLabel('Email').fill('owner@first.test');
    expect(await form.getByLabel('Time zone').inputValue()).not.toBe('');
    await form.getByLabel('Password').fill('first owner password');
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Create account' }).click();
    // The API's words for what only it checks.
    await expect.poll(() => page.locator('#setup-error').textContent()).toMatch(/IANA time zone/);
    // The token left the address bar at once.
    expect(page.url()).not.toContain('fst_');

    await form.getByLabel('Time zone').fill('America/Bogota');
    await form.getByRole('button', { name: 'Create account' }).click();
    await page.locator('#shell').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#who').textContent()).toBe('First Owner · owner');
    expect(await page.locator('#page h1').textContent()).toBe('API keys');

    // The first key, made on the page the owner lands on, works as a bearer credential.
    await page.locator('summary', { hasText: 'Create an API key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('First integration');
    await page.getByLabel('vehicles:read', { exact: true }).check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const secret = page.locator('.secret-box input.secret');
    await secret.waitFor();
    const key = await secret.inputValue();
    expect(key).toMatch(/^fc_live_[A-Za-z0-9]{32}$/);
    const vehicles = await fetch(`${base}/api/v1/vehicles`, { headers: { Authorization: `Bearer ${key}` } });
    expect(vehicles.status).toBe(200);
    expect(((await vehicles.json()) as { data: unknown[] }).data).toEqual([]);
    expect({ external, refused, errors }).toEqual({ external: [], refused: [], errors: [] });

    // The link is spent.
    const again = await page.request.post(`${base}/api/v1/auth/setup`, {
      data: body(/#setup=(fst_[A-Za-z0-9_-]+)/.exec(link)![1]!, 'again@first.test'), headers: { Origin: base },
    });
    expect(again.status()).toBe(404);
    await page.context().close();
  });
});
