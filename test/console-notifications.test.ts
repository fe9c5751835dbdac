import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { addUser, browserAndDemo, curl, openConsole, openPage, sessionOf, signIn, type WatchedPage } from './support/console-browser.ts';

// The console's notification pages in a real browser against `fleet serve` with the demo and a VAPID
// key: a rule made, listed, changed, disabled and deleted through the form, the API's refusal shown
// beside it, and its delivery log; what a dispatcher and a viewer are offered; one's own addresses,
// muting and report emails; the service worker and the push button. A real PushManager.subscribe
// needs a push service on the internet, so the browser's subscription is built here and handed to the
// API from the page, and a push reaches the worker through the DevTools protocol.

/** A P-256 key pair as VAPID and web push write them: the public point uncompressed, both base64url. */
function p256Keys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const point = publicKey.export({ format: 'jwk' });
  return {
    publicKey: Buffer.concat([Buffer.from([4]), Buffer.from(point.x!, 'base64url'), Buffer.from(point.y!, 'base64url')]).toString('base64url'),
    privateKey: privateKey.export({ format: 'jwk' }).d!,
  };
}

const vapid = p256Keys();
const scene = browserAndDemo({ env: { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: 'mailto:fleet@example.test' } });

const clean = (w: WatchedPage) => expect({ external: w.external, refused: w.refused, errors: w.errors }).toEqual({ external: [], refused: [], errors: [] });

async function signedIn(email = scene.demo.email, password = scene.demo.password): Promise<WatchedPage> {
  const watched = await openConsole(scene.browser, scene.demo.base);
  await signIn(watched.page, email, password);
  return watched;
}

async function confirm(page: Page, label: string): Promise<void> {
  await page.locator('dialog').getByRole('button', { name: label, exact: true }).click();
  await page.locator('dialog').waitFor({ state: 'detached' });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.1 A and AA violations on the page as it is now (the editor open, which the page-by-page check does not see). */
async function violations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((r) => r.violations.map((v) => v.id + ': ' + v.help + ' at ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`);
}

const shownError = (page: Page, form: string) => page.locator(`form[aria-label="${form}"] .error[role="alert"]:not([hidden])`).textContent();

describe('the console\'s Notifications page', () => {
  it('creates a rule through the form (the API\'s refusal shown beside it first), lists it, changes, disables and deletes it', async () => {
    const watched = await signedIn();
    const { page } = watched;
    const vehicles = (await curl(scene.demo.base, scene.demo.key, '/vehicles')).body.data as { id: string; name: string }[];
    const vehicle = vehicles[0]!;
    await openPage(page, 'Notifications');
    await page.locator('summary', { hasText: 'Create a rule' }).click();
    const form = page.locator('form[aria-label="Create a rule"]');
    const name = `Night panic ${Date.now()}`;
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('vehicle.panic', { exact: true }).check();
    await form.getByLabel('vehicle.geofence.enter', { exact: true }).check();
    // Kinds no rule may take are not offered at all.
    expect(await form.getByLabel('vehicle.position', { exact: true }).count()).toBe(0);
    expect(await form.getByLabel('webhook.disabled', { exact: true }).count()).toBe(0);
    await form.getByLabel('Chosen vehicles').check();
    await form.getByLabel(`${vehicle.name} (${vehicle.id})`).check();
    await form.getByLabel('Only on these days and hours').check();
    await form.getByRole('button', { name: 'Nights' }).click();
    await form.getByLabel('Minimum interval per vehicle').fill('5');
    await form.getByLabel('Unit of the minimum interval').selectOption('minutes');
    const me = form.locator('fieldset.recipient', { hasText: scene.demo.email });
    await me.getByLabel('Email').check();
    await me.getByLabel('Telegram').check();

    expect(await violations(page)).toEqual([]);

    // A time zone the API does not know: its own words, beside the form, and nothing created.
    await form.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await expect.poll(() => shownError(page, 'Create a rule')).toMatch(/timezone must be an IANA time zone/);
    expect(await page.locator('tbody tr', { hasText: name }).count()).toBe(0);

    await form.getByLabel('Time zone').fill('America/Mexico_City');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const row = page.locator('tbody tr', { hasText: name });
    await row.waitFor();
    expect(await row.locator('td[data-label="Kinds"]').textContent()).toBe('vehicle.geofence.entervehicle.panic');
    expect(await row.locator('td[data-label="Vehicles"]').textContent()).toBe(vehicle.name);
    expect(await row.locator('td[data-label="When"]').textContent()).toBe('every day 20:00–06:00 (America/Mexico_City)');
    expect(await row.locator('td[data-label="Recipients"]').textContent()).toBe('Demo Dispatcher: Email, Telegram');
    expect(await row.locator('td[data-label="State"]').textContent()).toBe('enabled');

    // What the API stored is what the form said.
    const owner = await sessionOf(scene.demo.base, scene.demo.email, scene.demo.password);
    const rules = (await owner('/notification-rules')).body.data as Array<Record<string, any>>;
    const stored = rules.find((r) => r.name === name)!;
    expect(stored).toMatchObject({
      events: ['vehicle.geofence.enter', 'vehicle.panic'],
      vehicles: { scope: 'list', vehicleIds: [vehicle.id] },
      geofenceIds: null,
      schedule: { days: [1, 2, 3, 4, 5, 6, 7], from: '20:00', to: '06:00' },
      timezone: 'America/Mexico_City',
      minIntervalSeconds: 300,
      recipients: [{ userId: expect.any(Number), channels: ['email', 'telegram'] }],
      enabled: true,
    });

    // Changed: a whole family instead of two kinds, any time, every vehicle, one geofence only.
    await row.getByRole('button', { name: `Edit ${name}` }).click();
    const edit = page.locator(`form[aria-label="Change the rule ${name}"]`);
    expect(await edit.getByLabel('vehicle.panic', { exact: true }).isChecked()).toBe(true);
    expect(await edit.getByLabel('Minimum interval per vehicle').inputValue()).toBe('5');
    await edit.getByLabel('vehicle.* every kind of the family').check();
    expect(await edit.getByLabel('vehicle.panic', { exact: true }).isDisabled()).toBe(true);
    await edit.getByLabel('Any time').check();
    await edit.getByLabel('All vehicles').check();
    await edit.getByLabel('Only these geofences').check();
    await edit.getByLabel('Airport Cargo').check();
    expect(await violations(page)).toEqual([]);
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => row.locator('td[data-label="Kinds"]').textContent()).toBe('vehicle.*');
    expect(await row.locator('td[data-label="When"]').textContent()).toBe('any time');
    expect(await row.locator('td[data-label="Vehicles"]').textContent()).toBe('all1 geofence(s) only');
    const changed = ((await owner('/notification-rules')).body.data as Array<Record<string, any>>).find((r) => r.name === name)!;
    expect(changed).toMatchObject({ events: ['vehicle.*'], vehicles: { scope: 'all' }, schedule: null, geofenceIds: [expect.any(Number)] });

    await row.getByRole('button', { name: `Disable ${name}` }).click();
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toBe('disabled');
    await row.getByRole('button', { name: `Enable ${name}` }).click();
    await expect.poll(() => row.locator('td[data-label="State"]').textContent()).toBe('enabled');

    await row.getByRole('link', { name: `Deliveries of ${name}` }).click();
    const log = page.locator('section[aria-label="Deliveries of the rule"]');
    await log.getByRole('heading', { name: `Deliveries of ${name}` }).waitFor();
    expect(await log.locator('.empty').textContent()).toBe('No deliveries yet.');

    await row.getByRole('button', { name: `Delete ${name}` }).click();
    await confirm(page, 'Delete');
    await expect.poll(() => page.locator('tbody tr', { hasText: name }).count()).toBe(0);
    clean(watched);
    await page.context().close();
  });

  it('shows a rule\'s deliveries: a cancelled command notified by email, which this server does not send, failed with the reason', async () => {
    const owner = await sessionOf(scene.demo.base, scene.demo.email, scene.demo.password);
    const me = (await owner('/users/me')).body.data as { id: number };
    const imei = `86${Date.now()}`.slice(0, 15);
    expect((await owner('/vehicles', { method: 'POST', body: { imei, name: `Parked van ${imei}`, protocol: 'teltonika' } })).status).toBe(201);
    const name = `Cancelled commands ${imei}`;
    const rule = await owner('/notification-rules', { method: 'POST', body: {
      name, events: ['command.cancelled'], vehicles: { scope: 'list', vehicleIds: [imei] }, recipients: [{ userId: me.id, channels: ['email'] }],
    } });
    expect(rule.status).toBe(201);
    // Its tracker never connected, so the command stays queued until cancelled: a command.cancelled event.
    const queued = await owner('/commands', { method: 'POST', body: { deviceId: imei, type: 'engine_resume' } });
    expect((await owner(`/commands/${queued.body.data.id}`, { method: 'DELETE' })).status).toBeLessThan(300);

    const watched = await signedIn();
    const { page } = watched;
    await page.goto(`${scene.demo.base}/console#/notifications/${rule.body.data.id}`);
    const log = page.locator('section[aria-label="Deliveries of the rule"]');
    await log.getByRole('heading', { name: `Deliveries of ${name}` }).waitFor();
    const delivery = log.locator('tbody tr');
    await expect.poll(async () => {
      await log.getByRole('button', { name: 'Refresh' }).click();
      return delivery.locator('td[data-label="Status"]').textContent().catch(() => null);
    }, { timeout: 30_000, interval: 1_000 }).toBe('failed');
    expect(await delivery.locator('td[data-label="Channel"]').textContent()).toBe('Email');
    expect(await delivery.locator('td[data-label="Recipient"]').textContent()).toBe(`Demo Dispatcher (${scene.demo.email})`);
    expect(await delivery.locator('td[data-label="Event"]').textContent()).toBe('command.cancelled');
    expect(await delivery.locator('td[data-label="Error"]').textContent()).toMatch(/not configured on this server/);
    clean(watched);
    await page.context().close();
    expect((await owner(`/notification-rules/${rule.body.data.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await owner(`/vehicles/${imei}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('offers a dispatcher only themselves as recipient and no groups; a viewer reads the rules and changes none', async () => {
    const dispatcher = await addUser(scene.demo, 'dispatcher');
    const watched = await signedIn(dispatcher.email, dispatcher.password);
    const { page } = watched;
    await openPage(page, 'Notifications');
    await page.locator('summary', { hasText: 'Create a rule' }).click();
    const form = page.locator('form[aria-label="Create a rule"]');
    expect(await form.locator('fieldset.recipient legend').allTextContents()).toEqual([`A dispatcher (${dispatcher.email})`]);
    expect(await form.getByLabel('The vehicles of some groups').count()).toBe(0);
    const name = `Offline trackers ${Date.now()}`;
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('device.offline', { exact: true }).check();
    await form.locator('fieldset.recipient').getByLabel('SMS').check();
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.locator('tbody tr', { hasText: name }).waitFor();
    clean(watched);
    await page.context().close();

    const viewer = await addUser(scene.demo, 'viewer');
    const reader = await signedIn(viewer.email, viewer.password);
    await openPage(reader.page, 'Notifications');
    const row = reader.page.locator('tbody tr', { hasText: name });
    await row.waitFor();
    expect(await row.locator('td[data-label="Recipients"]').textContent()).toBe(`A dispatcher: SMS`);
    expect(await reader.page.locator('summary', { hasText: 'Create a rule' }).count()).toBe(0);
    expect(await row.getByRole('button').count()).toBe(0);
    clean(reader);
    await reader.page.context().close();
  });
});

describe('the console\'s My notifications page', () => {
  it('sets my Telegram chat and phone (a bad phone refused in the API\'s words), mutes me until a time, and unmutes', async () => {
    const user = await addUser(scene.demo, 'viewer');
    const watched = await signedIn(user.email, user.password);
    const { page } = watched;
    await openPage(page, 'My notifications');
    const form = page.locator('form[aria-label="Where my notifications go"]');
    await form.getByLabel('Phone for SMS').fill('12345');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => shownError(page, 'Where my notifications go')).toMatch(/phone must be an E\.164 number/);

    await form.getByLabel('Telegram chat id').fill('123456789');
    await form.getByLabel('Phone for SMS').fill('+52 55 1234 5678');
    await form.getByLabel('Mute all my notifications').check();
    await form.getByLabel('Muted until').fill('2031-01-02T08:30');
    expect(await violations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('#page strong', { hasText: 'Muted' }).textContent().catch(() => null)).toMatch(/^Muted until .*2031/);

    const mine = await sessionOf(scene.demo.base, user.email, user.password);
    const channels = (await mine('/users/me/notification-channels')).body.data;
    expect(channels).toMatchObject({ telegramChatId: '123456789', phone: '+525512345678', muted: true, email: null, effectiveEmail: user.email });
    // 08:30 read in the user's zone (America/Mexico_City, UTC-6), not the browser's (UTC here).
    expect(channels.mutedUntil).toEqual({ local: '02/01/2031 08:30', utc: '02/01/2031 14:30' });

    await page.reload();
    await openPage(page, 'My notifications');
    const again = page.locator('form[aria-label="Where my notifications go"]');
    expect(await again.getByLabel('Telegram chat id').inputValue()).toBe('123456789');
    expect(await again.getByLabel('Muted until').inputValue()).toBe('2031-01-02T08:30');
    await again.getByLabel('Mute all my notifications').uncheck();
    await again.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await mine('/users/me/notification-channels')).body.data.muted).toBe(false);
    clean(watched);
    await page.context().close();
  });

  it('adds a weekly report email and removes it', async () => {
    const watched = await signedIn();
    const { page } = watched;
    await openPage(page, 'My notifications');
    const form = page.locator('form[aria-label="Subscribe to a report"]');
    await form.getByLabel('How often').selectOption('weekly');
    await form.getByLabel('Weekday').selectOption('1');
    await form.getByLabel('At').fill('07:30');
    await form.getByLabel('Geofence visits').check();
    await form.getByRole('button', { name: 'Subscribe' }).click();
    const row = page.locator('tbody tr', { hasText: 'Weekly on Monday at 07:30' });
    await row.waitFor();
    expect(await row.locator('td[data-label="Reports"]').textContent()).toBe('Trips, Geofence visits');
    expect(await row.locator('td[data-label="Next"]').textContent()).toMatch(/\d/);
    await row.getByRole('button', { name: 'Remove Weekly on Monday at 07:30' }).click();
    await confirm(page, 'Remove');
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Weekly on Monday at 07:30' }).count()).toBe(0);
    clean(watched);
    await page.context().close();
  });

  it('serves the service worker as JavaScript, which shows a pushed message; offers the push button with the server\'s key, takes a subscription from the page and removes it', async () => {
    const worker = await fetch(`${scene.demo.base}/console/notification-worker.js`);
    expect(worker.status).toBe(200);
    expect(worker.headers.get('content-type')).toMatch(/^text\/javascript/);

    const watched = await signedIn();
    const { page } = watched;
    await openPage(page, 'My notifications');
    await page.getByRole('button', { name: 'Get notifications in this browser' }).waitFor();
    expect(await page.locator('#push-unavailable').count()).toBe(0);
    // The worker installs in this browser at the scope the console asks for (what the button does before subscribing).
    const scope = await page.evaluate(`(async () => {
      const registration = await navigator.serviceWorker.register('/console/notification-worker.js', { scope: '/console' });
      const worker = registration.installing ?? registration.waiting ?? registration.active;
      if (worker.state !== 'activated') await new Promise((resolve) => worker.addEventListener('statechange', () => worker.state === 'activated' && resolve()));
      return registration.scope;
    })()`);
    expect(scope).toBe(`${scene.demo.base}/console`);
    // A push delivered to the worker (through the DevTools protocol, as a push service would) is shown with its title, body and link.
    await page.context().grantPermissions(['notifications'], { origin: scene.demo.base });
    const cdp = await page.context().newCDPSession(page);
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const ours = registrations.find((r) => r.scopeURL === `${scene.demo.base}/console` && !r.isDeleted);
        if (ours) resolve(ours.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    const registrationId = await registered;
    const payload = { title: 'Truck 12 entered Airport Cargo', body: '08:30 at Av. Capitán Carlos León', url: `${scene.demo.base}/console#/notifications` };
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: scene.demo.base, registrationId, data: JSON.stringify(payload) });
    await expect.poll(() => page.evaluate(`navigator.serviceWorker.getRegistration('/console')
      .then((r) => r.getNotifications()).then((shown) => shown.map((n) => ({ title: n.title, body: n.body, url: n.data.url })))`),
    // The browser starts the worker to take the push: on a loaded machine that takes seconds, not the poll's default one.
    { timeout: 15_000, interval: 100 }).toEqual([payload]);

    // The applicationServerKey the button would subscribe with: the server's VAPID public key, as bytes (an uncompressed P-256 point).
    const key = await page.evaluate(`(async () => {
      const channels = (await (await fetch('/api/v1/users/me/notification-channels')).json()).data;
      const { keyBytes } = await import('/console/static/push-browser.js');
      return Array.from(keyBytes(channels.vapidPublicKey));
    })()`);
    expect(key).toEqual([...Buffer.from(vapid.publicKey, 'base64url')]);
    expect((key as number[]).length).toBe(65);

    // A subscription as a browser's PushSubscription.toJSON() writes it, handed to the API from the page.
    const subscription = { endpoint: `https://push.example.test/send/${randomBytes(8).toString('hex')}`, expirationTime: null, keys: { p256dh: p256Keys().publicKey, auth: randomBytes(16).toString('base64url') } };
    const answer = await page.evaluate(`(async () => {
      const session = await (await fetch('/api/v1/auth/session')).json();
      const response = await fetch('/api/v1/users/me/push-subscriptions', {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.data.csrfToken }, body: ${JSON.stringify(JSON.stringify(subscription))},
      });
      return { status: response.status, body: await response.json() };
    })()`) as { status: number; body: { data: { id: number } } };
    expect(answer.status).toBe(201);
    await page.reload();
    await openPage(page, 'My notifications');
    const browsers = page.locator('section[aria-labelledby="push-heading"] tbody tr');
    await expect.poll(() => browsers.count()).toBe(1);
    await browsers.getByRole('button', { name: /^Remove / }).click();
    await confirm(page, 'Remove');
    await expect.poll(() => browsers.count()).toBe(0);
    clean(watched);
    await page.context().close();
  });

  it('says why there is no push button in a browser without PushManager', async () => {
    const watched = await openConsole(scene.browser, scene.demo.base);
    const { page } = watched;
    await page.addInitScript('delete window.PushManager');
    await page.reload();
    await signIn(page, scene.demo.email, scene.demo.password);
    await openPage(page, 'My notifications');
    await expect.poll(() => page.locator('#push-unavailable').textContent()).toMatch(/does not support web push/);
    expect(await page.getByRole('button', { name: 'Get notifications in this browser' }).count()).toBe(0);
    clean(watched);
    await page.context().close();
  });
});
