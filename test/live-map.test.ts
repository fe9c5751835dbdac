import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freshDatabase, root, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';

// The live map in a real browser (Debian's chromium driven by playwright-core) against a real
// `fleet serve` running the demo fleet: its simulated trackers report every 5 s over TCP.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = join(root, 'test/artifacts/live-map.png');
const MARKERS = '.leaflet-marker-pane [data-device-id]';
/** The demo's live vehicles (its fifth is a test-mode vehicle, which a live key does not see). */
const DEMO_LIVE_VEHICLES = 4;
const DEMO_GEOFENCES = 4;

let fresh: FreshDatabase | undefined;
let server: Serving | undefined;
let browser: Browser | undefined;
let base = '';
let key = '';

beforeAll(async () => {
  // A failure, not a skip: CI installs chromium (.ci/run), and a map no browser opened is not tested.
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
  fresh = await freshDatabase();
  const trackerPort = await freePort();
  server = await serve(
    { ...fresh.env, PORT: '0', DEMO_SEED: 'true', DEMO_SIMULATE: 'true', TELTONIKA_PORT: String(trackerPort) },
    /fc_live_[A-Za-z0-9]{32}/,
  );
  key = /fc_live_[A-Za-z0-9]{32}/.exec(server.output())![0];
  base = server.url.replace('//localhost:', '//127.0.0.1:');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) {
    server.process.kill('SIGTERM');
    const killer = setTimeout(() => server!.process.kill('SIGKILL'), 15_000);
    await server.exited;
    clearTimeout(killer);
  }
  await fresh?.destroy();
});

/** A page that records what would make the map untrustworthy: other origins, CSP refusals, script errors. */
async function openMap(): Promise<{ page: Page; external: string[]; refused: string[]; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1400, height: 850 } });
  const external: string[] = [];
  const refused: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== base) external.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${base}/map`);
  return { page, external, refused, errors };
}

async function logIn(page: Page, apiKey: string): Promise<void> {
  await page.locator('#api-key').fill(apiKey);
  await page.locator('#login-form button[type="submit"]').click();
}

/** Each marker's place on the screen, by device. */
async function markerPlaces(page: Page): Promise<Record<string, [number, number]>> {
  const places: Record<string, [number, number]> = {};
  for (const face of await page.locator(MARKERS).all()) {
    const box = await face.boundingBox();
    if (box) places[(await face.getAttribute('data-device-id'))!] = [box.x, box.y];
  }
  return places;
}

/** Waits until `selector` matches exactly `n` elements. */
const matchCount = (page: Page, selector: string, n: number, timeout: number) =>
  expect.poll(() => page.locator(selector).count(), { timeout, interval: 250 }).toBe(n);

async function api(path: string, init: { method?: string; body?: unknown } = {}): Promise<any> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  expect(response.ok, `${path}: ${response.status}`).toBe(true);
  return response.json();
}

describe('the live map', () => {
  it('shows the demo fleet moving over its geofences, a trail, the travel, and a geofence enter as it happens', async () => {
    const { page, external, refused, errors } = await openMap();
    await page.locator('#login').waitFor({ state: 'visible' });
    await logIn(page, key);

    // The key is in this tab's session storage and nowhere else.
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([key]);
    expect(await page.evaluate('[localStorage.length, document.cookie]')).toEqual([0, '']);

    await matchCount(page, 'path.geofence', DEMO_GEOFENCES, 30_000);
    await matchCount(page, MARKERS, DEMO_LIVE_VEHICLES, 30_000);
    const rows = page.locator('#vehicle-list li[data-device-id]');
    await expect.poll(() => rows.count()).toBe(DEMO_LIVE_VEHICLES);
    for (const row of await rows.all()) expect(await row.getAttribute('class')).toMatch(/status-(moving|stopped|off|inactive)/);
    await page.locator('#connection[data-state="live"]').waitFor({ timeout: 15_000 });

    // The demo trucks drive at 15–90 km/h and report every 5 s: a marker moves on the screen (the map
    // itself stays where it was framed).
    const before = await markerPlaces(page);
    await expect
      .poll(async () => {
        const now = await markerPlaces(page);
        return Object.keys(before).some((id) => now[id] && Math.hypot(now[id][0] - before[id]![0], now[id][1] - before[id]![1]) >= 1);
      }, { timeout: 30_000, interval: 500 })
      .toBe(true);

    // A geofence made now around a vehicle: its enter can only reach the list through the live stream.
    const statuses: any[] = (await api('/devices/status')).data;
    const vehicle = statuses.find((v) => v.latitude !== null)!;
    await api('/geofences', {
      method: 'POST',
      body: { name: 'Browser Test Zone', type: 'circle', center: { lat: vehicle.latitude, lng: vehicle.longitude }, radiusMeters: 1500 },
    });
    // (Other vehicles near it may enter too.)
    const enter = page.locator('#event-list li[data-type="vehicle.geofence.enter"]', { hasText: `${vehicle.name}entered Browser Test Zone` });
    await enter.first().waitFor({ timeout: 30_000 });
    // The event named a geofence the map did not have: it reads the geofences again and draws it.
    await matchCount(page, 'path.geofence', DEMO_GEOFENCES + 1, 15_000);

    // A moving vehicle's last hour, drawn when it is picked from the list.
    await page.locator('#vehicle-list li[data-status="Moving"]').first().click();
    await page.locator('path.trail').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator('#selected-details').textContent()).toMatch(/[1-9]\d* points over the last hour/);

    // The demo's scheduled travel: its waypoints with expected times, numbered on the map.
    const travel = page.locator('#travel-list li[data-travel-id]');
    await travel.first().waitFor({ timeout: 15_000 });
    const travelText = await travel.first().textContent();
    for (const part of ['Truck 01', 'Scheduled', 'Airport Cargo', 'Polanco Customer', 'expected']) expect(travelText).toContain(part);
    expect(await page.locator('.waypoint-badge').count()).toBe(2);

    mkdirSync(join(root, 'test/artifacts'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });

    // The key outlives a reload of the tab; logging out forgets it.
    await page.reload();
    await matchCount(page, MARKERS, DEMO_LIVE_VEHICLES, 30_000);
    expect(await page.locator('#login').isHidden()).toBe(true);
    await page.locator('#logout').click();
    await expect.poll(() => page.locator('#login').isVisible()).toBe(true);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.locator(MARKERS).count()).toBe(0);

    expect(external, 'requests to other origins').toEqual([]);
    expect(refused, 'Content-Security-Policy refusals').toEqual([]);
    expect(errors, 'script errors').toEqual([]);
    await page.close();
  }, 120_000);

  it('returns to the login box saying why when the API refuses the key', async () => {
    const { page, errors } = await openMap();
    await logIn(page, `fc_live_${'x'.repeat(32)}`);
    const message = page.locator('#login-error');
    await message.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await message.textContent()).toMatch(/^The API refused the key: .+/);
    expect(await page.locator('#app').isHidden()).toBe(true);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
