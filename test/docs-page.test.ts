import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '../api/routes/docs.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// The API reference in a real browser (Debian's chromium through playwright-core): it renders under
// its Content-Security-Policy, reaches no other origin, and a key typed into "Authorize" is kept in
// the page's memory only, never in localStorage.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let t: TestApp;
let http: { url: string; close(): Promise<void> };
let browser: Browser;
let key: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  t = await startTestApp();
  http = await serveOverHttp(t.app);
  key = (await t.fixtures.tenant()).key;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await http?.close();
  await t?.close();
});

describe('GET /docs', () => {
  it('is served under a Content-Security-Policy that forbids framing and inline scripts', async () => {
    const res = await fetch(`${http.url}/docs`);
    expect(res.headers.get('content-security-policy')).toBe(DOCS_CONTENT_SECURITY_POLICY);
    expect(DOCS_CONTENT_SECURITY_POLICY).toMatch(/frame-ancestors 'none'/);
    expect(DOCS_CONTENT_SECURITY_POLICY).toMatch(/script-src 'self'(;|$)/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(await res.text()).not.toMatch(/<script>(?!<\/script>)/);
  });

  it('renders in a browser under that policy, and keeps an authorized key out of localStorage', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    const external: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    page.on('request', (request) => {
      if (new URL(request.url()).origin !== http.url) external.push(request.url());
    });
    try {
      await page.goto(`${http.url}/docs`);
      await page.waitForSelector('.opblock', { timeout: 30_000 });
      await page.click('button.authorize');
      const input = page.locator('.auth-container input').first();
      await input.fill(key);
      await page.locator('.auth-btn-wrapper button.authorize').first().click();
      await page.locator('.auth-btn-wrapper button.btn-done').first().click();
      // The page's storage, read in the page (the tests are compiled without the DOM's types).
      const stored = await page.evaluate(() => {
        const { localStorage, sessionStorage } = globalThis as unknown as Record<string, Record<string, string>>;
        return { local: { ...localStorage }, session: { ...sessionStorage } };
      });
      expect(JSON.stringify(stored)).not.toContain(key);
      expect(stored.local).toEqual({});
      expect(refused).toEqual([]);
      expect(external).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
