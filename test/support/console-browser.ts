import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './fleet-process.ts';

// The console in a real browser (Debian's chromium driven by playwright-core) against a real
// `fleet serve`: what the console tests share.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Chromium, or a failure (never a skip): CI installs it, and a page no browser opened is not tested. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** A running `fleet serve` with the demo fleet seeded, and the demo user's sign-in it printed. */
export interface DemoServer {
  base: string;
  email: string;
  password: string;
  /** The demo's live API key, for setting scenes the test does not drive through the console. */
  key: string;
  trackerPort: number;
  server: Serving;
  stop(): Promise<void>;
}

const SIGN_IN_LINE = /Sign in to the console at (\S+)\/console .* as (\S+) with the password (\S+) \(shown once\)/;

/** `fleet serve` on a database of its own with the demo seeded (`simulate`: its trackers driving), and `env` added. */
export async function startDemoServer(options: { simulate?: boolean; env?: Record<string, string>; database?: FreshDatabase } = {}): Promise<DemoServer> {
  const fresh: FreshDatabase = options.database ?? await freshDatabase();
  const trackerPort = await freePort();
  const server = await serve(
    { ...fresh.env, PORT: '0', DEMO_SEED: 'true', DEMO_SIMULATE: options.simulate ? 'true' : 'false', TELTONIKA_PORT: String(trackerPort), ...options.env },
    SIGN_IN_LINE,
  );
  const [, , email, password] = SIGN_IN_LINE.exec(server.output())!;
  const key = /fc_live_[A-Za-z0-9]{32}/.exec(server.output())![0];
  return {
    base: server.url.replace('//localhost:', '//127.0.0.1:'),
    email: email!,
    password: password!,
    key,
    trackerPort,
    server,
    async stop() {
      server.process.kill('SIGTERM');
      const killer = setTimeout(() => server.process.kill('SIGKILL'), 15_000);
      await server.exited;
      clearTimeout(killer);
      await fresh.destroy();
    },
  };
}

/**
 * Chromium and a demo server for the tests of one file: started before them, stopped after. The
 * fields are set once beforeAll has run.
 */
export function browserAndDemo(options: Parameters<typeof startDemoServer>[0] = {}): { browser: Browser; demo: DemoServer } {
  const scene = {} as { browser: Browser; demo: DemoServer };
  beforeAll(async () => {
    scene.browser = await launchChromium();
    scene.demo = await startDemoServer(options);
  }, 180_000);
  afterAll(async () => {
    await scene.browser?.close();
    await scene.demo?.stop();
  }, 60_000);
  return scene;
}

/** A console page that records what would make it untrustworthy: other origins, CSP refusals, script errors. */
export interface WatchedPage {
  page: Page;
  external: string[];
  refused: string[];
  errors: string[];
}

export async function openConsole(browser: Browser, base: string, viewport = { width: 1280, height: 860 }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const watched: WatchedPage = { page, external: [], refused: [], errors: [] };
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.origin !== base && url.protocol !== 'data:') watched.external.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) watched.refused.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
  await page.goto(`${base}/console`);
  return watched;
}

/** Signs in through the console's form and waits for the menu. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  const form = page.locator('#sign-in-form');
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#shell').waitFor({ state: 'visible', timeout: 15_000 });
}

/** Opens a console page by its menu link (as a reader would) and waits for its heading. */
export async function openPage(page: Page, title: string): Promise<void> {
  await page.locator('#nav').getByRole('link', { name: title, exact: true }).click();
  await expect.poll(() => page.locator('#page h1').textContent()).toBe(title);
}

/** A request to the API with a bearer credential, as `curl` would make it. */
export async function curl(base: string, key: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, Accept: 'application/json', ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

type Call = (path: string, init?: { method?: string; body?: unknown }) => Promise<{ status: number; body: any }>;

/**
 * Requests to the API as a signed-in browser makes them (the session cookie, the CSRF token on writes,
 * this origin): for what the demo key may not do, as `users:write` and `keys:write` are named-only.
 */
export async function sessionOf(base: string, email: string, password: string): Promise<Call> {
  const signedIn = await fetch(`${base}/api/v1/auth/sign-in`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: base }, body: JSON.stringify({ email, password }),
  });
  if (!signedIn.ok) throw new Error(`sign-in: ${signedIn.status} ${await signedIn.text()}`);
  const cookie = signedIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const current = await (await fetch(`${base}/api/v1/auth/session`, { headers: { Cookie: cookie } })).json() as { data: { csrfToken: string } };
  const csrf: string = current.data.csrfToken;
  return async (path, init = {}) => {
    const method = init.method ?? 'GET';
    const response = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        Cookie: cookie, Origin: base, Accept: 'application/json',
        ...(method === 'GET' ? {} : { 'X-CSRF-Token': csrf }),
        ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  };
}

/** A user of the demo account with `role` and a password, invited through the API by the demo owner's session. */
export async function addUser(demo: DemoServer, role: 'owner' | 'admin' | 'dispatcher' | 'viewer', password = `${role} password 12345`): Promise<{ id: number; email: string; password: string }> {
  const owner = await sessionOf(demo.base, demo.email, demo.password);
  const email = `${role}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;
  const created = await owner('/users', { method: 'POST', body: { email, name: `A ${role}`, role, timezone: 'America/Mexico_City' } });
  if (created.status !== 201) throw new Error(`POST /users: ${created.status} ${JSON.stringify(created.body)}`);
  const link = await owner(`/users/${created.body.data.id}/sign-in-link`, { method: 'POST', body: {} });
  if (link.status !== 201) throw new Error(`POST /users/{id}/sign-in-link: ${link.status} ${JSON.stringify(link.body)}`);
  await setPasswordByLink(demo, link.body.data.url, password);
  return { id: created.body.data.id, email, password };
}

/** Sets a user's password through a one-time link (its token is in the fragment). */
export async function setPasswordByLink(demo: DemoServer, url: string, password: string): Promise<void> {
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token');
  const response = await fetch(`${demo.base}/api/v1/auth/set-password`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token, password }),
  });
  if (!response.ok) throw new Error(`set-password: ${response.status} ${await response.text()}`);
}
