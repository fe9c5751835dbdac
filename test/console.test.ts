import { describe, expect, it } from 'vitest';
import { browserAndDemo, curl, openConsole, openPage, signIn } from './support/console-browser.ts';

// The console's frame in a real browser against `fleet serve` with the demo: signing in with what the
// server printed at start, the menu, the overview, the live map inside it, my account's sessions, a
// phone's screen, and signing out.

const scene = browserAndDemo();

describe('the console', () => {
  it('is where / leads, and signs in with the sign-in `fleet serve` printed (a wrong password gets the API\'s words)', async () => {
    const { page, external, refused, errors } = await openConsole(scene.browser, scene.demo.base);
    await page.goto(`${scene.demo.base}/`);
    expect(new URL(page.url()).pathname).toBe('/console');
    const form = page.locator('#sign-in-form');
    await form.getByLabel('Email').fill(scene.demo.email);
    await form.getByLabel('Password').fill('not the password');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toBe('Email or password is wrong');

    await signIn(page, scene.demo.email, scene.demo.password);
    expect(await page.locator('#who').textContent()).toBe('Demo Dispatcher · owner');
    const links = await page.locator('#nav a').allTextContents();
    expect(links).toEqual(expect.arrayContaining(['Overview', 'Live map', 'Vehicles', 'Geofences', 'Travels', 'Commands', 'API keys', 'Webhooks', 'Users', 'Audit log', 'My account']));
    await expect.poll(() => page.locator('.stat strong').first().textContent()).toBe('4');
    expect(await page.locator('#nav a[aria-current="page"]').textContent()).toBe('Overview');
    expect({ external, refused, errors }).toEqual({ external: [], refused: [], errors: [] });
    await page.context().close();
  });

  it('shows the live map inside, opened by the session with no key to paste', async () => {
    const { page, external, refused, errors } = await openConsole(scene.browser, scene.demo.base);
    await signIn(page, scene.demo.email, scene.demo.password);
    await openPage(page, 'Live map');
    const map = page.frameLocator('iframe[title="Live map of the fleet"]');
    await expect.poll(() => map.locator('#connection').getAttribute('data-state'), { timeout: 20_000 }).toBe('live');
    await expect.poll(() => map.locator('#vehicle-list li[data-device-id]').count(), { timeout: 20_000 }).toBe(4);
    expect(await map.locator('#login').isVisible()).toBe(false);
    // Signing out is the console's own button: the framed map shows no second one.
    expect(await map.locator('#logout').isVisible()).toBe(false);
    expect({ external, refused, errors }).toEqual({ external: [], refused: [], errors: [] });
    await page.context().close();
  });

  it('lists my sessions on a laptop and a phone, and signing out everywhere ends every one at once', async () => {
    const laptop = await openConsole(scene.browser, scene.demo.base);
    const phone = await openConsole(scene.browser, scene.demo.base, { width: 390, height: 844 });
    await signIn(laptop.page, scene.demo.email, scene.demo.password);
    await signIn(phone.page, scene.demo.email, scene.demo.password);

    // On a phone the menu folds behind its button.
    expect(await phone.page.locator('#nav').isVisible()).toBe(false);
    await phone.page.getByRole('button', { name: 'Menu' }).click();
    expect(await phone.page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('true');
    await openPage(phone.page, 'My account');
    expect(await phone.page.locator('#nav').isVisible()).toBe(false);
    await expect.poll(() => phone.page.locator('td', { hasText: 'this one' }).count()).toBe(1);

    await openPage(laptop.page, 'My account');
    await expect.poll(() => laptop.page.locator('tbody tr').count()).toBeGreaterThanOrEqual(2);
    await laptop.page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await laptop.page.locator('#sign-in').waitFor({ state: 'visible', timeout: 15_000 });

    // The phone's session ended too: its next request is refused and the page goes back to signing in.
    expect((await phone.page.request.get(`${scene.demo.base}/api/v1/auth/session`)).status()).toBe(401);
    await phone.page.reload();
    await phone.page.locator('#sign-in').waitFor({ state: 'visible', timeout: 15_000 });
    for (const w of [laptop, phone]) expect({ external: w.external, refused: w.refused, errors: w.errors }).toEqual({ external: [], refused: [], errors: [] });
    await laptop.page.context().close();
    await phone.page.context().close();
  });

  it('signs out: the cookie no longer reaches the API, which keeps taking keys', async () => {
    const { page } = await openConsole(scene.browser, scene.demo.base);
    await signIn(page, scene.demo.email, scene.demo.password);
    expect((await page.request.get(`${scene.demo.base}/api/v1/vehicles`)).status()).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    expect((await page.request.get(`${scene.demo.base}/api/v1/vehicles`)).status()).toBe(401);
    expect((await curl(scene.demo.base, scene.demo.key, '/vehicles')).status).toBe(200);
    await page.context().close();
  });
});
