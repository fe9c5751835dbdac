import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser, curl, launchChromium, openConsole, openPage, signIn, startDemoServer, type DemoServer, type WatchedPage } from './support/console-browser.ts';

// The console's Fleet pages in a real browser against `fleet serve` with the demo fleet driving:
// geofences drawn with the mouse that the simulated trackers then enter, vehicles, travels and
// commands made through the pages and checked through the API, and a viewer who can change nothing.

let browser: Browser;
let demo: DemoServer;

beforeAll(async () => {
  browser = await launchChromium();
  demo = await startDemoServer({ simulate: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await demo?.stop();
}, 60_000);

const api = (path: string, init?: { method?: string; body?: unknown }) => curl(demo.base, demo.key, path, init);
const unique = (prefix: string) => `${prefix} ${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

async function ownerOn(title: string): Promise<WatchedPage> {
  const watched = await openConsole(browser, demo.base);
  await signIn(watched.page, demo.email, demo.password);
  await openPage(watched.page, title);
  return watched;
}

function clean(w: WatchedPage) {
  expect({ external: w.external, refused: w.refused, errors: w.errors }).toEqual({ external: [], refused: [], errors: [] });
}

/** The confirmation dialog's button, once it is open. */
async function answer(page: Page, label: string) {
  const dialog = page.locator('dialog[open]');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: label, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

// Web Mercator, as Leaflet places a point: pixels at a zoom level and back.
const SIZE = (zoom: number) => 256 * 2 ** zoom;
const toPixel = (lat: number, lng: number, zoom: number) => {
  const s = Math.sin((lat * Math.PI) / 180);
  return { x: (SIZE(zoom) * (lng + 180)) / 360, y: SIZE(zoom) * (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) };
};
const toLatLng = (x: number, y: number, zoom: number) => ({
  lat: (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / SIZE(zoom)))) * 180) / Math.PI,
  lng: (x / SIZE(zoom)) * 360 - 180,
});
const ZOOM = 15;

/**
 * A demo vehicle its simulated tracker is driving now: the demo's seeded positions come first, so
 * this waits for a fix reported after the tracker came online.
 */
async function drivingVehicle(): Promise<any> {
  let found: any;
  await expect.poll(async () => {
    const online = new Map<string, number>();
    for (const e of (await api('/events?limit=200')).body.data) if (e.type === 'device.online') online.set(e.data.vehicle.name, Date.parse(e.timestamp));
    found = (await api('/devices/status')).body.data.find((d: any) => d.status === 'Moving' && online.has(d.name) && Date.parse(d.lastReportUtc) > online.get(d.name)!);
    return found !== undefined;
  }, { timeout: 60_000, interval: 1000 }).toBe(true);
  return found;
}

describe('the console\'s Fleet pages', () => {
  it('draws a polygon around a moving demo vehicle with the drawing toolbar, saves it as drawn, and the live map shows the vehicle entering it', async () => {
    const w = await ownerOn('Geofences');
    const { page } = w;
    await page.locator('tbody tr', { hasText: 'Airport Cargo' }).waitFor();
    const moving = await drivingVehicle();
    // Centre the map on where the vehicle is now (a square of ±120 px at zoom 15, ±540 m, holds where it drives in the next half minute).
    await page.getByLabel('Latitude').fill(String(moving.latitude));
    await page.getByLabel('Longitude').fill(String(moving.longitude));
    await page.getByRole('button', { name: 'Centre map' }).click();
    const map = page.getByRole('region', { name: 'Map of the geofences' });
    const box = (await map.boundingBox())!;
    const size = await map.evaluate((node) => ({ width: node.clientWidth, height: node.clientHeight }));
    await page.waitForTimeout(300);

    await page.getByRole('button', { name: 'Draw Polygons' }).click();
    const corners = [[-120, -120], [120, -120], [120, 120], [-120, 120]] as const;
    const centre = toPixel(moving.latitude, moving.longitude, ZOOM);
    // The container's border offsets its content from the bounding box by the client left/top.
    const inner = await map.evaluate((node) => ({ left: node.clientLeft, top: node.clientTop }));
    const at = ([dx, dy]: readonly [number, number]) => ({ x: box.x + inner.left + size.width / 2 + dx, y: box.y + inner.top + size.height / 2 + dy });
    for (const corner of corners) {
      const p = at(corner);
      await page.mouse.click(p.x, p.y);
      await page.waitForTimeout(150);
    }
    const first = at(corners[0]);
    await page.mouse.click(first.x, first.y);

    const panel = page.locator('.geofence-panel');
    await expect.poll(() => panel.locator('h2').textContent()).toBe('New polygon');
    const name = unique('Drawn zone');
    await panel.getByLabel('Name').fill(name);
    await panel.getByRole('button', { name: 'Save geofence' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: name }).count()).toBe(1);

    // Saved as drawn: each corner where the mouse put it (to about a pixel, 5 m).
    const saved = (await api('/geofences')).body.data.find((g: any) => g.name === name);
    expect(saved).toMatchObject({ type: 'polygon', vertexCount: 4 });
    for (const [dx, dy] of corners) {
      const expected = toLatLng(centre.x + dx, centre.y + dy, ZOOM);
      expect(saved.vertices.some((v: any) => Math.abs(v.lat - expected.lat) < 1e-4 && Math.abs(v.lng - expected.lng) < 1e-4), `${dx},${dy} → ${JSON.stringify(expected)} in ${JSON.stringify(saved.vertices)}`).toBe(true);
    }

    // The vehicle's next fix falls inside: the engine logs its entry, and the live map in the console lists it.
    const enters = async () => (await api('/events?limit=100')).body.data.filter((e: any) => e.type === 'vehicle.geofence.enter' && e.data?.geofence?.name === name);
    await expect.poll(async () => (await enters()).length, { timeout: 60_000, interval: 1000 }).toBeGreaterThanOrEqual(1);
    await openPage(page, 'Live map');
    const live = page.frameLocator('iframe[title="Live map of the fleet"]');
    const [enter] = await enters();
    const entered = live.locator(`#event-list li[data-id="${enter.id}"][data-type="vehicle.geofence.enter"]`);
    await expect.poll(() => entered.textContent(), { timeout: 20_000 }).toContain(`entered ${name}`);
    clean(w);
    await page.context().close();
  }, 120_000);

  it('changes a circle\'s radius and a polygon\'s vertex in the fields, and deletes a geofence after confirming', async () => {
    const circleName = unique('Circle');
    const polygonName = unique('Polygon');
    const circle = await api('/geofences', { method: 'POST', body: { name: circleName, type: 'circle', center: { lat: 19.5, lng: -99.3 }, radiusMeters: 200 } });
    const polygon = await api('/geofences', { method: 'POST', body: { name: polygonName, type: 'polygon', vertices: [{ lat: 19.6, lng: -99.3 }, { lat: 19.6, lng: -99.29 }, { lat: 19.61, lng: -99.29 }] } });
    expect([circle.status, polygon.status]).toEqual([201, 201]);
    const w = await ownerOn('Geofences');
    const { page } = w;
    const panel = page.locator('.geofence-panel');

    await page.locator('tbody tr', { hasText: circleName }).waitFor();

    // From the keyboard alone: a circle started at the map's centre, placed and sized in its fields.
    const typedName = unique('Typed circle');
    await panel.getByRole('button', { name: 'New circle here' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => panel.locator('h2').textContent()).toBe('New circle');
    await page.keyboard.type(typedName);
    for (const [label, value] of [['Centre latitude', '19.55'], ['Centre longitude', '-99.25'], ['Radius (m)', '75']] as const) {
      await panel.getByLabel(label).focus();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(value);
    }
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('tbody tr', { hasText: typedName }).count()).toBe(1);
    expect((await api('/geofences')).body.data.find((g: any) => g.name === typedName)).toMatchObject({ type: 'circle', centerLat: 19.55, centerLng: -99.25, radiusMeters: 75 });

    await page.getByRole('button', { name: `Edit ${circleName}` }).click();
    expect(await panel.getByLabel('Centre latitude').inputValue()).toBe('19.5');
    await panel.getByLabel('Radius (m)').fill('321');
    await panel.getByLabel('Centre longitude').fill('-99.301');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await api(`/geofences/${circle.body.data.id}`)).body.data).toMatchObject({ radiusMeters: 321, centerLat: 19.5, centerLng: -99.301, type: 'circle' });

    await page.getByRole('button', { name: `Edit ${polygonName}` }).click();
    const vertices = panel.getByLabel('Vertices');
    expect((await vertices.inputValue()).split('\n')).toHaveLength(3);
    await vertices.fill('19.6, -99.3\n19.6, -99.29\n19.615, -99.288');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await api(`/geofences/${polygon.body.data.id}`)).body.data.vertices).toEqual(
      expect.arrayContaining([{ lat: 19.615, lng: -99.288 }, { lat: 19.6, lng: -99.3 }, { lat: 19.6, lng: -99.29 }]));

    // A geofence chosen while the list is read again after a save stays chosen.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const listRead = (url: URL) => url.pathname.endsWith('/geofences');
    let holding = true;
    await page.route(listRead, async (route) => {
      if (holding && route.request().method() === 'GET') {
        holding = false;
        await held;
      }
      await route.continue();
    });
    await page.getByRole('button', { name: `Edit ${circleName}` }).click();
    await panel.getByLabel('Radius (m)').fill('322');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await api(`/geofences/${circle.body.data.id}`)).body.data.radiusMeters).toBe(322);
    await page.getByRole('button', { name: `Edit ${polygonName}` }).click();
    release();
    await expect.poll(() => page.locator('tbody tr', { hasText: circleName }).textContent()).toContain('322 m');
    expect((await vertices.inputValue()).split('\n')).toHaveLength(3);

    // On the map: a corner dragged with the mouse moves in the fields, and is saved where it was dropped.
    await page.getByRole('button', { name: `Edit ${polygonName}` }).click();
    const before = await vertices.inputValue();
    const corner = page.locator('.geofence-map .marker-icon:not(.marker-icon-middle)').first();
    await corner.waitFor();
    await page.waitForTimeout(500);
    const b = (await corner.boundingBox())!;
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width / 2 + 40, b.y + b.height / 2 + 25, { steps: 6 });
    await page.mouse.up();
    await expect.poll(() => vertices.inputValue()).not.toBe(before);
    const dragged = (await vertices.inputValue()).split('\n').map((line) => line.split(',').map(Number)).map(([lat, lng]) => ({ lat, lng }));
    expect(dragged).toHaveLength(3);
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await api(`/geofences/${polygon.body.data.id}`)).body.data.vertices).toEqual(expect.arrayContaining(dragged));

    // A refusal is shown in the API's words.
    await page.getByRole('button', { name: `Edit ${circleName}` }).click();
    await panel.getByLabel('Radius (m)').fill('150000');
    await panel.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => panel.locator('.error').textContent()).toBe('radiusMeters must be more than 0 and at most 100000 (100 km), got 150000');
    await panel.getByRole('button', { name: 'Stop editing' }).click();

    await page.getByRole('button', { name: `Delete ${polygonName}` }).click();
    await answer(page, 'Cancel');
    expect((await api(`/geofences/${polygon.body.data.id}`)).status).toBe(200);
    await page.getByRole('button', { name: `Delete ${polygonName}` }).click();
    await answer(page, 'Delete geofence');
    await expect.poll(async () => (await api(`/geofences/${polygon.body.data.id}`)).status).toBe(404);
    await expect.poll(() => page.locator('tbody tr', { hasText: polygonName }).count()).toBe(0);

    // Leaving while the map still zooms onto a selection: the map goes without an error.
    await page.getByRole('button', { name: 'Edit Airport Cargo' }).click();
    await openPage(page, 'Travels');
    await page.waitForTimeout(600);
    clean(w);
    await page.context().close();
  }, 60_000);

  it('adds a tracker, renames it, shows the API\'s refusal of a duplicate IMEI, and deletes it', async () => {
    const w = await ownerOn('Vehicles');
    const { page } = w;
    const imei = `35${Date.now()}`.slice(0, 15);
    const name = unique('Tractor');
    await page.getByText('Add a tracker').click();
    const add = page.locator('form', { has: page.getByRole('button', { name: 'Add tracker' }) });
    expect(await add.getByLabel('Protocol').locator('option').allTextContents()).toEqual(expect.arrayContaining(['teltonika', 'gt06', 'osmand']));
    await add.getByLabel('IMEI').fill(imei);
    await add.getByLabel('Protocol').selectOption('gt06');
    await add.getByLabel('Name').fill(name);
    await add.getByLabel('Plates').fill('XYZ-987');
    await add.getByRole('button', { name: 'Add tracker' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: imei }).count()).toBe(1);
    expect((await api(`/vehicles/${imei}`)).body.data).toMatchObject({ id: imei, name, plates: 'XYZ-987', protocol: 'gt06' });
    expect(await page.locator('tbody tr', { hasText: imei }).textContent()).toContain('gt06');
    // Found by its plates, alone.
    await page.getByLabel('Name or plates').fill('xyz-987');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr td[data-label="IMEI"]').textContent()).toBe(imei);
    await page.getByLabel('Name or plates').fill('');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThan(1);

    // The same IMEI again: the API's own words.
    const duplicate = await api('/vehicles', { method: 'POST', body: { imei, name: unique('Other') } });
    expect(duplicate.status).toBe(409);
    await add.getByLabel('IMEI').fill(imei);
    await add.getByLabel('Name').fill(unique('Other'));
    await add.getByRole('button', { name: 'Add tracker' }).click();
    await expect.poll(() => add.locator('.error').textContent()).toBe(duplicate.body.error);

    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const edit = page.locator('form', { has: page.getByRole('button', { name: 'Save' }) });
    const renamed = `${name} renamed`;
    await edit.getByLabel('Name').fill(renamed);
    await edit.getByLabel('Plates').fill('NEW-111');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await api(`/vehicles/${imei}`)).body.data).toMatchObject({ name: renamed, plates: 'NEW-111', protocol: 'gt06' });
    await expect.poll(() => page.locator('tbody tr', { hasText: imei }).textContent()).toContain(renamed);

    // Into a vehicle group and out again (the owner's session: groups need users:write, which keys hold only by name).
    const group = await page.evaluate(async (groupName) => {
      const session = ((await (await fetch('/api/v1/auth/session')).json()) as { data: { csrfToken: string } }).data;
      const response = await fetch('/api/v1/groups', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken }, body: JSON.stringify({ name: groupName }) });
      return ((await response.json()) as { data: { id: number } }).data;
    }, unique('Group'));
    const groupOf = async () => page.evaluate(async (id) => ((await (await fetch(`/api/v1/groups/${id}`)).json()) as { data: { name: string; vehicle_ids: string[] } }).data, group.id);
    const { name: groupName } = await groupOf();
    await page.reload();
    await page.getByRole('button', { name: `Edit ${renamed}` }).click();
    await edit.getByRole('checkbox', { name: groupName }).check();
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await groupOf()).vehicle_ids).toEqual([imei]);
    await expect.poll(() => page.locator('tbody tr', { hasText: imei }).locator('td[data-label="Groups"]').textContent()).toBe(groupName);
    expect((await api(`/vehicles/${imei}`)).body.data.groups).toEqual([{ id: group.id, name: groupName }]);
    await page.getByRole('button', { name: `Edit ${renamed}` }).click();
    await edit.getByRole('checkbox', { name: groupName }).uncheck();
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await groupOf()).vehicle_ids).toEqual([]);

    await page.getByRole('button', { name: `Delete ${renamed}` }).click();
    await answer(page, 'Delete vehicle');
    await expect.poll(async () => (await api(`/vehicles/${imei}`)).status).toBe(404);
    clean(w);
    await page.context().close();
  }, 60_000);

  it('pages through the fleet 50 vehicles at a time', async () => {
    const tag = unique('Pager').replace(' ', '-');
    const imeis: string[] = [];
    try {
      await pagesThrough(tag, imeis);
    } finally {
      for (const imei of imeis) await api(`/vehicles/${imei}`, { method: 'DELETE' });
    }
  }, 60_000);

  async function pagesThrough(tag: string, imeis: string[]) {
    for (let i = 0; i < 51; i++) {
      const imei = `${tag}-${i}`.slice(-32).replace(/[^0-9A-Za-z._-]/g, '_');
      expect((await api('/vehicles', { method: 'POST', body: { imei, name: `${tag} ${String(i).padStart(2, '0')}` } })).status).toBe(201);
      imeis.push(imei);
    }
    const w = await ownerOn('Vehicles');
    const { page } = w;
    await page.locator('tbody tr').first().waitFor();
    await page.getByLabel('Name or plates').fill(tag);
    await page.getByRole('button', { name: 'Find' }).click();
    // Each page reads its 50 vehicles' details: allow a busy machine its time.
    const slow = { timeout: 20_000 };
    await expect.poll(() => page.locator('tbody tr').count(), slow).toBe(50);
    expect(await page.locator('tbody tr td[data-label="Name"]').first().textContent()).toBe(`${tag} 00`);
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => page.locator('tbody tr td[data-label="Name"]').allTextContents(), slow).toEqual([`${tag} 50`]);
    expect(await page.getByRole('button', { name: 'Next' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => page.locator('tbody tr').count(), slow).toBe(50);
    clean(w);
    await page.context().close();
  }

  it('creates a travel through geofences in order, follows it, lists it, and cancels it after confirming', async () => {
    const busy = new Set((await api('/travels')).body.data.map((t: any) => t.vehicle));
    const vehicle = (await api('/vehicles?limit=500')).body.data.map((v: any) => v.name).find((n: string) => !busy.has(n));
    expect(vehicle).toBeDefined();
    const w = await ownerOn('Travels');
    const { page } = w;
    await page.getByText('Create a travel').click();
    await page.getByLabel('Vehicle').selectOption(vehicle);
    await page.getByRole('button', { name: 'Add waypoint' }).click();
    const selects = page.locator('.waypoint-row').getByLabel('Geofence');
    await selects.nth(0).selectOption('Vallejo Depot');
    await selects.nth(1).selectOption('Airport Cargo');
    // Reorder: Airport Cargo first.
    await page.getByRole('button', { name: 'Move waypoint 2 up' }).click();
    await page.getByRole('button', { name: 'Create travel' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/travels\/\d+$/);
    const id = Number(/(\d+)$/.exec(page.url())![1]);
    await expect.poll(() => page.locator('#page h2').first().textContent()).toBe(`Travel ${id}: ${vehicle}`);
    const travel = (await api(`/travels/${id}`)).body.data;
    expect(travel.vehicle).toBe(vehicle);
    expect(travel.waypoints.map((p: any) => p.geofence)).toEqual(['Current position', 'Airport Cargo', 'Vallejo Depot']);
    expect(await page.locator('tbody tr td[data-label="Geofence"]').allTextContents()).toEqual(['Current position', 'Airport Cargo', 'Vallejo Depot']);
    expect(await page.locator('tbody tr td[data-label="Expected"]').nth(1).textContent()).toBe(travel.waypoints[1].expectedArrival.local);

    await page.getByRole('link', { name: 'All active travels' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: `Travel ${id}` }).textContent()).toContain(vehicle);
    await page.getByRole('link', { name: `Travel ${id}` }).click();
    await page.getByRole('button', { name: 'Cancel travel' }).click();
    await answer(page, 'Cancel travel');
    await expect.poll(() => page.locator('.travel-status').textContent()).toBe('Cancelled');
    expect((await api(`/travels/${id}`)).body.data.status).toBe('Cancelled');
    expect(await page.getByRole('button', { name: 'Cancel travel' }).count()).toBe(0);
    expect(await page.locator('#page').textContent()).not.toMatch(/null|undefined/);
    clean(w);
    await page.context().close();
  }, 60_000);

  it('reads a followed travel again every 30 seconds while its page is open', async () => {
    const busy = new Set((await api('/travels')).body.data.map((t: any) => t.vehicle));
    const vehicle = (await api('/vehicles?limit=500')).body.data.map((v: any) => v.name).find((n: string) => !busy.has(n));
    const now = new Date(Date.now() + 3_600_000);
    const time = (d: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: 'America/Mexico_City', day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(d).replace(',', '');
    const created = await api('/travels', { method: 'POST', body: { vehicle, startTime: time(now), waypoints: [{ geofence: 'Vallejo Depot', expectedArrival: time(new Date(now.getTime() + 3_600_000)) }] } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.travelId;

    const w = await openConsole(browser, demo.base);
    const { page } = w;
    await page.clock.install();
    await page.reload();
    await signIn(page, demo.email, demo.password);
    await page.goto(`${demo.base}/console#/travels/${id}`);
    await expect.poll(() => page.locator('.travel-status').textContent()).toBe('Scheduled');
    expect((await api(`/travels/${id}`, { method: 'DELETE' })).status).toBe(200);
    await page.clock.runFor(20_000);
    expect(await page.locator('.travel-status').textContent()).toBe('Scheduled');
    await page.clock.runFor(10_000);
    await expect.poll(() => page.locator('.travel-status').textContent()).toBe('Cancelled');

    // Leaving the page stops its reads.
    let reads = 0;
    page.on('request', (request) => { if (new URL(request.url()).pathname === `/api/v1/travels/${id}`) reads += 1; });
    await openPage(page, 'Vehicles');
    await page.clock.runFor(65_000);
    expect(reads).toBe(0);
    clean(w);
    await page.context().close();
  }, 60_000);

  it('confirms an engine cut-off naming the vehicle and its speed: Cancel sends nothing, Confirm sends; a queued command is cancelled', async () => {
    const w = await ownerOn('Commands');
    const { page } = w;
    const target = (await api('/devices/status')).body.data.find((d: any) => d.name === 'Van 03');
    const before = (await api('/commands?limit=500')).body.data.length;
    await page.getByLabel('Vehicle').selectOption(target.deviceId);
    await page.getByLabel('Command', { exact: true }).selectOption('engine_stop');
    const speedBefore = (await api(`/devices/${target.deviceId}/status`)).body.data;
    await page.getByRole('button', { name: 'Send command' }).click();
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    const speedAfter = (await api(`/devices/${target.deviceId}/status`)).body.data;
    const text = (await dialog.locator('p').first().textContent())!;
    const said = [speedBefore, speedAfter].map((s) => `Cut off the engine of Van 03? ${s.status === 'Moving' ? `It is moving at ${s.speedKmh} km/h.` : `It is ${s.status.toLowerCase()} (${s.speedKmh} km/h).`}`);
    expect(said).toContain(text);
    await answer(page, 'Cancel');
    expect((await api('/commands?limit=500')).body.data.length).toBe(before);

    await page.getByRole('button', { name: 'Send command' }).click();
    await answer(page, 'Cut off the engine');
    await expect.poll(async () => (await api('/commands?limit=500')).body.data.length).toBe(before + 1);
    const sent = (await api('/commands?limit=1')).body.data[0];
    expect(sent).toMatchObject({ deviceId: target.deviceId, type: 'engine_stop' });
    const row = page.locator('tbody tr').filter({ has: page.locator('td[data-label="Id"]', { hasText: new RegExp(`^${sent.id}$`) }) });
    await expect.poll(async () => {
      const shown = await row.locator('td[data-label="State"]').textContent();
      return shown === (await api(`/commands/${sent.id}`)).body.data.status;
    }, { timeout: 25_000 }).toBe(true);
    // Whatever the safe-stop rule did with it, take it back if still queued (the demo keeps driving).
    if ((await api(`/commands/${sent.id}`)).body.data.status === 'queued') await api(`/commands/${sent.id}`, { method: 'DELETE' });

    // A tracker that never connected keeps its commands queued: cancel one from the page.
    const imei = `86${Date.now()}`.slice(0, 15);
    expect((await api('/vehicles', { method: 'POST', body: { imei, name: unique('Idle van'), protocol: 'teltonika' } })).status).toBe(201);
    const queued = await api('/commands', { method: 'POST', body: { deviceId: imei, type: 'engine_resume' } });
    expect(queued.body.data.status).toBe('queued');
    await page.reload();
    await page.getByRole('button', { name: `Cancel command ${queued.body.data.id}` }).click();
    await answer(page, 'Cancel command');
    await expect.poll(async () => (await api(`/commands/${queued.body.data.id}`)).body.data.status).toBe('cancelled');
    await expect.poll(() => page.getByRole('button', { name: `Cancel command ${queued.body.data.id}` }).count()).toBe(0);
    expect(await api(`/vehicles/${imei}`, { method: 'DELETE' })).toMatchObject({ status: 200 });
    expect(await page.locator('#page').textContent()).not.toMatch(/null|undefined/);
    clean(w);
    await page.context().close();
  }, 90_000);

  it('offers the owner raw custom text and a dispatcher only the built-in commands; a dispatcher registers no tracker', async () => {
    const owner = await ownerOn('Commands');
    await owner.page.getByLabel('Command', { exact: true }).waitFor();
    const ownerTypes = await owner.page.getByLabel('Command', { exact: true }).locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(ownerTypes).toEqual(['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo', 'custom']);
    await owner.page.getByLabel('Command', { exact: true }).selectOption('custom');
    expect(await owner.page.getByLabel('Text').isVisible()).toBe(true);
    clean(owner);
    await owner.page.context().close();

    const dispatcher = await addUser(demo, 'dispatcher');
    const truck = (await api('/vehicles?limit=500')).body.data.find((v: any) => v.name === 'Truck 01');
    const { user_ids } = (await api(`/vehicles/${truck.id}`)).body.data;
    expect((await api(`/vehicles/${truck.id}`, { method: 'PATCH', body: { user_ids: [...user_ids, dispatcher.id] } })).status).toBe(200);
    const w = await openConsole(browser, demo.base);
    const { page } = w;
    await signIn(page, dispatcher.email, dispatcher.password);
    await openPage(page, 'Commands');
    await page.getByLabel('Command', { exact: true }).waitFor();
    const types = await page.getByLabel('Command', { exact: true }).locator('option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    expect(types).toEqual(['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo']);
    expect(await page.getByLabel('Vehicle').locator('option').allTextContents()).toEqual([`Truck 01 (${truck.id})`]);
    await openPage(page, 'Vehicles');
    await page.locator('tbody tr', { hasText: 'Truck 01' }).waitFor();
    expect(await page.getByText('Add a tracker').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Edit Truck 01' }).count()).toBe(0);
    await openPage(page, 'Geofences');
    await page.getByRole('button', { name: 'Draw Polygons' }).waitFor();
    clean(w);
    await page.context().close();
  }, 60_000);

  it('shows a viewer no control that changes anything, and the API refuses a viewer\'s write with 403', async () => {
    const viewer = await addUser(demo, 'viewer');
    // The viewer is granted the demo's vehicles, so its pages show them (and travel 1 of the demo).
    for (const v of (await api('/vehicles?limit=500')).body.data) {
      const { user_ids } = (await api(`/vehicles/${v.id}`)).body.data;
      expect((await api(`/vehicles/${v.id}`, { method: 'PATCH', body: { user_ids: [...user_ids, viewer.id] } })).status).toBe(200);
    }
    const w = await openConsole(browser, demo.base);
    const { page } = w;
    await signIn(page, viewer.email, viewer.password);
    const writes = /^(Add a tracker|Add tracker|Edit|Delete|Save|Save geofence|Save changes|Create a travel|Create travel|Cancel travel|Send command|Cancel)$/;
    for (const title of ['Vehicles', 'Geofences', 'Travels', 'Commands']) {
      await openPage(page, title);
      await expect.poll(() => page.locator('#page .loading').count()).toBe(0);
      await page.waitForTimeout(500);
      const buttons = await page.locator('#page button, #page summary').allTextContents();
      expect(buttons.filter((b) => writes.test(b.trim())), title).toEqual([]);
      expect(await page.locator('.leaflet-pm-toolbar').count(), title).toBe(0);
    }
    await openPage(page, 'Geofences');
    await page.getByRole('button', { name: 'Show Airport Cargo' }).click();
    expect(await page.locator('.geofence-panel').getByLabel('Name').isEditable()).toBe(false);
    expect(await page.locator('.geofence-panel').getByLabel('Name').inputValue()).toBe('Airport Cargo');
    await openPage(page, 'Travels');
    await page.getByRole('link', { name: /^Travel \d+$/ }).first().click();
    await expect.poll(() => page.locator('.travel-status').count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Cancel travel' }).count()).toBe(0);

    // Its session cookie and CSRF token are refused a write by the API.
    const status = await page.evaluate(async () => {
      const session = ((await (await fetch('/api/v1/auth/session')).json()) as { data: { csrfToken: string } }).data;
      const response = await fetch('/api/v1/geofences', {
        method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrfToken },
        body: JSON.stringify({ name: 'Viewer zone', type: 'circle', center: { lat: 19.4, lng: -99.1 }, radiusMeters: 100 }),
      });
      return { status: response.status, error: ((await response.json()) as { error: string }).error };
    });
    expect(status.status).toBe(403);
    expect((await api('/geofences')).body.data.some((g: any) => g.name === 'Viewer zone')).toBe(false);
    clean(w);
    await page.context().close();
  }, 60_000);
});
