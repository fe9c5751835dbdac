import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { browserAndDemo, openConsole, signIn } from './support/console-browser.ts';

// Every console page checked by axe-core (Deque's accessibility engine) against WCAG 2.1 A and AA:
// labels, names, contrast, landmarks, ARIA. On a laptop's screen and a phone's, signed in as the owner
// (who sees every page and every control).

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PAGES = ['/', '/vehicles', '/geofences', '/travels', '/commands', '/keys', '/oauth-clients', '/notifications', '/webhooks', '/users', '/groups', '/audit', '/account', '/my-notifications'];

const scene = browserAndDemo();

interface Violation { id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }

/** axe's WCAG 2.1 A and AA violations on the page as it is now (run through the DevTools protocol: the page's CSP stays as served). */
async function violations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations;
  });
  return found.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

async function settle(page: Page, hash: string): Promise<void> {
  await page.goto(`${scene.demo.base}/console#${hash}`);
  await page.locator('#page .loading').waitFor({ state: 'detached', timeout: 15_000 }).catch(() => {});
  await page.waitForLoadState('networkidle');
}

describe('the console, to axe-core', () => {
  it('has no WCAG 2.1 A or AA violation on the sign-in page', async () => {
    const { page } = await openConsole(scene.browser, scene.demo.base);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    expect(await violations(page)).toEqual([]);
    await page.context().close();
  });

  it('is checked by an engine that does find a violation (an input added with no label)', async () => {
    const { page } = await openConsole(scene.browser, scene.demo.base);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.evaluate("document.getElementById('sign-in-form').append(document.createElement('input'))");
    expect((await violations(page)).join('\n')).toMatch(/^label \(critical\)/m);
    await page.context().close();
  });

  for (const viewport of [{ width: 1280, height: 860 }, { width: 390, height: 844 }]) {
    it(`has none on any page at ${viewport.width} pixels wide`, async () => {
      const { page, errors } = await openConsole(scene.browser, scene.demo.base, viewport);
      await signIn(page, scene.demo.email, scene.demo.password);
      const found: Record<string, string[]> = {};
      for (const hash of PAGES) {
        await settle(page, hash);
        const list = await violations(page);
        if (list.length > 0) found[hash] = list;
      }
      expect(found).toEqual({});
      expect(errors).toEqual([]);
      await page.context().close();
    }, 180_000);
  }
});
