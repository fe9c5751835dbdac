import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, freshDatabase, root, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';

// The live map in a real browser (Debian's chromium driven by playwright-core) against a real
// `fleet serve` running the demo fleet: its simulated trackers report every 5 s over TCP. Offline by
// default; then with MAP_TILE_URL pointing at a local tile server.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = join(root, 'test/artifacts/live-map.png');
const MARKERS = '.leaflet-marker-pane [data-device-id]';
/** The demo's live vehicles (its fifth is a test-mode vehicle, which a live key does not see). */
const DEMO_LIVE_VEHICLES = 4;
const DEMO_GEOFENCES = 4;

let browser: Browser | undefined;
/** The running demo server of the describe block under way. */
let demo: Demo | undefined;
let base = '';
let key = '';

interface Demo {
  fresh: FreshDatabase;
  server?: Serving;
}

beforeAll(async () => {
  // A failure, not a skip: CI installs chromium (.ci/run), and a map no browser opened is not tested.
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No chromium at ${CHROMIUM}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** `fleet serve` on a database of its own, seeding and driving the demo fleet, with `env` added. */
async function startDemo(env: Record<string, string> = {}): Promise<void> {
  demo = { fresh: await freshDatabase() };
  const trackerPort = await freePort();
  demo.server = await serve(
    { ...demo.fresh.env, PORT: '0', DEMO_SEED: 'true', DEMO_SIMULATE: 'true', TELTONIKA_PORT: String(trackerPort), ...env },
    /fc_live_[A-Za-z0-9]{32}/,
  );
  key = /fc_live_[A-Za-z0-9]{32}/.exec(demo.server.output())![0];
  base = demo.server.url.replace('//localhost:', '//127.0.0.1:');
}

async function stopDemo(): Promise<void> {
  const server = demo?.server;
  if (server) {
    server.process.kill('SIGTERM');
    const killer = setTimeout(() => server.process.kill('SIGKILL'), 15_000);
    await server.exited;
    clearTimeout(killer);
  }
  await demo?.fresh.destroy();
  demo = undefined;
}

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
  beforeAll(() => startDemo(), 180_000);
  afterAll(stopDemo, 60_000);

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

/** One opaque pixel, a valid PNG: Leaflet sizes each tile image to 256 px itself. */
const TILE_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const TILE_ATTRIBUTION = 'Test tiles © <fleetcore>';

describe('the live map over a tile server (MAP_TILE_URL)', () => {
  let tileServer: Server | undefined;
  let tileOrigin = '';
  const tileRequests: string[] = [];

  beforeAll(async () => {
    tileServer = createServer((request, response) => {
      tileRequests.push(request.url ?? '');
      if (!/^\/tiles\/\d+\/\d+\/\d+\.png$/.test(request.url ?? '')) return void response.writeHead(404).end();
      response.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': TILE_PNG.length }).end(TILE_PNG);
    });
    await new Promise<void>((listening) => tileServer!.listen(0, '127.0.0.1', listening));
    tileOrigin = `http://127.0.0.1:${(tileServer.address() as { port: number }).port}`;
    await startDemo({ MAP_TILE_URL: `${tileOrigin}/tiles/{z}/{x}/{y}.png`, MAP_TILE_ATTRIBUTION: TILE_ATTRIBUTION });
  }, 180_000);

  afterAll(async () => {
    await stopDemo();
    await new Promise((closed) => tileServer?.close(closed));
  }, 60_000);

  it('draws the tiles under the graticule, credits the tile server, and lists first statuses without a "null"', async () => {
    const { page, external, refused, errors } = await openMap();
    await logIn(page, key);
    await matchCount(page, MARKERS, DEMO_LIVE_VEHICLES, 30_000);

    // Tiles asked of the tile server by the browser, loaded (the policy allows its origin) and shown.
    await expect.poll(() => tileRequests.length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(tileRequests.every((url) => /^\/tiles\/\d+\/\d+\/\d+\.png$/.test(url)), tileRequests.join(' ')).toBe(true);
    await expect.poll(() => page.locator(`.leaflet-tile-pane img.leaflet-tile-loaded[src^="${tileOrigin}/tiles/"]`).count(), { timeout: 15_000 }).toBeGreaterThan(0);
    // The graticule's canvas stays over the tiles.
    expect(await page.evaluate(`(() => {
      const layers = [...document.querySelectorAll('.leaflet-tile-pane > .leaflet-layer')];
      const tiles = layers.findIndex((l) => l.querySelector('img'));
      const lines = layers.findIndex((l) => l.querySelector('canvas'));
      return tiles >= 0 && lines >= 0 && Number(getComputedStyle(layers[tiles]).zIndex) < Number(getComputedStyle(layers[lines]).zIndex);
    })()`)).toBe(true);
    // The attribution, as text: its angle brackets shown, not read as markup.
    await expect.poll(() => page.locator('.leaflet-control-attribution').textContent()).toContain(TILE_ATTRIBUTION);
    expect(await page.locator('.leaflet-control-attribution fleetcore').count()).toBe(0);

    // A vehicle's first status (from null) reads "now <status>" in the event list.
    const events: any[] = (await api('/events?types=vehicle.status.changed&limit=500&order=asc')).data;
    const first = events.find((e) => e.data.from === null);
    expect(first, 'a first status among the demo fleet\'s events').toBeDefined();
    const item = page.locator(`#event-list li[data-id="${first.id}"]`);
    await item.waitFor({ timeout: 15_000 });
    expect(await item.textContent()).toBe(`${await item.locator('time').textContent()}${first.data.vehicle.name}now ${first.data.to}`);
    await page.locator('#event-list li[data-type="vehicle.status.changed"]').first().waitFor();
    for (const text of await page.locator('#event-list li').allTextContents()) expect(text).not.toMatch(/null|undefined/);

    expect(external.filter((url) => !url.startsWith(`${tileOrigin}/`)), 'requests to origins other than the tile server').toEqual([]);
    expect(refused, 'Content-Security-Policy refusals').toEqual([]);
    expect(errors, 'script errors').toEqual([]);
    await page.close();
  }, 120_000);
});
