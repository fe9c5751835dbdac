import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TravelStatus } from '../db/schema.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// POST, GET, PATCH and DELETE /geofences through the whole HTTP app. That the engine follows these
// writes is test/geofence-writes-engine.test.ts.

let t: TestApp;
let key: string;
let tenant: Awaited<ReturnType<TestApp['fixtures']['tenant']>>;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.fixtures.tenant();
  key = tenant.key;
});
afterAll(async () => {
  await t?.close();
});

const post = (body: unknown, as = key) => t.json('/api/v1/geofences', { key: as, method: 'POST', body });
const get = (id: number | string, as = key) => t.json(`/api/v1/geofences/${id}`, { key: as });
const patch = (id: number | string, body: unknown, as = key) => t.json(`/api/v1/geofences/${id}`, { key: as, method: 'PATCH', body });
const remove = (id: number | string, as = key) => t.json(`/api/v1/geofences/${id}`, { key: as, method: 'DELETE' });
const circle = (name: string, lat = 19.4, lng = -99.1, radiusMeters = 200) => ({ name, type: 'circle', center: { lat, lng }, radiusMeters });
const square = [{ lat: 19.40, lng: -99.10 }, { lat: 19.40, lng: -99.09 }, { lat: 19.41, lng: -99.09 }, { lat: 19.41, lng: -99.10 }];
let unique = 0;
const fresh = (prefix: string) => `${prefix} ${++unique}`;

async function created(body: unknown): Promise<any> {
  const res = await post(body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe('geofence writes', () => {
  it('creates, reads, changes and deletes a geofence, in the envelope of the detailed endpoints', async () => {
    const res = await post({ name: 'Yard', type: 'polygon', vertices: square, exitDwellSeconds: 45 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: expect.any(Object), error: null, timestamp: expect.any(String) });
    expect(res.body.data).toMatchObject({ name: 'Yard', type: 'polygon', vertexCount: 4, enterDwellSeconds: 0, exitDwellSeconds: 45 });
    const id = res.body.data.id;
    expect((await get(id)).body.data).toEqual(res.body.data);
    // The list carries the same object.
    expect((await t.json('/api/v1/geofences', { key })).body.data.find((g: any) => g.id === id)).toEqual(res.body.data);

    const reshaped = await patch(id, { name: 'Yard 2', type: 'circle', center: { lat: 19.5, lng: -99.2 }, radiusMeters: 300 });
    expect(reshaped.status).toBe(200);
    expect(reshaped.body.data).toMatchObject({ id, name: 'Yard 2', type: 'circle', centerLat: 19.5, centerLng: -99.2, radiusMeters: 300, vertexCount: 64, exitDwellSeconds: 45 });
    expect((await get(id)).body.data).toEqual(reshaped.body.data);

    const deleted = await remove(id);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id, deleted: true });
    expect((await get(id)).status).toBe(404);
    expect((await remove(id)).status).toBe(404);
    expect((await t.json('/api/v1/geofences', { key })).body.data.map((g: any) => g.id)).not.toContain(id);
  });

  it('closes a polygon for the user: given open, closed, or with a vertex repeated, the same vertices', async () => {
    const open = await created({ name: 'Open', type: 'polygon', vertices: square });
    const closed = await created({ name: 'Closed', type: 'polygon', vertices: [...square, square[0]] });
    const stutter = await created({ name: 'Stutter', type: 'polygon', vertices: [square[0], square[1], square[1], square[2], square[3], square[0]] });
    expect(open.vertices).toEqual(square);
    expect(closed.vertices).toEqual(open.vertices);
    expect(stutter.vertices).toEqual(open.vertices);
    expect([open.vertexCount, closed.vertexCount, stutter.vertexCount]).toEqual([4, 4, 4]);
  });

  it('answers coordinates to 7 decimals: vertices and a centre read back exactly as given', async () => {
    // Through PostGIS these come back as 19.368699999999997, -99.16310000000001 and the like.
    const vertices = [{ lat: 19.3687, lng: -99.1631 }, { lat: 19.3687, lng: -99.1587 }, { lat: 19.3721, lng: -99.1587 }, { lat: 19.3721, lng: -99.1631 }];
    const polygon = await created({ name: fresh('Precise polygon'), type: 'polygon', vertices });
    expect(polygon.vertices).toEqual(vertices);
    expect(JSON.stringify((await get(polygon.id)).body.data.vertices)).toBe(JSON.stringify(vertices));
    for (const n of [polygon.centerLat, polygon.centerLng]) expect(Number(n.toFixed(7))).toBe(n);
    expect(Number(polygon.radiusMeters.toFixed(1))).toBe(polygon.radiusMeters);

    const circle = await created({ name: fresh('Precise circle'), type: 'circle', center: { lat: 19.3687123, lng: -99.1631987 }, radiusMeters: 250 });
    expect(circle).toMatchObject({ centerLat: 19.3687123, centerLng: -99.1631987, radiusMeters: 250 });
    for (const v of circle.vertices) for (const n of [v.lat, v.lng]) expect(Number(n.toFixed(7))).toBe(n);
  });

  it('takes a GeoJSON Polygon (an altitude dropped) and MultiPolygon, listing the largest part', async () => {
    const small = [[-99.0, 19.0], [-98.99, 19.0], [-98.99, 19.01], [-99.0, 19.0]];
    const large = [[-99.2, 19.2], [-99.1, 19.2], [-99.1, 19.3], [-99.2, 19.3], [-99.2, 19.2]];
    const multi = await created({ name: 'Two lots', geometry: { type: 'MultiPolygon', coordinates: [[small], [large]] } });
    expect(multi).toMatchObject({ type: 'polygon', vertexCount: 4 });
    expect(multi.vertices).toEqual(large.slice(0, 4).map(([lng, lat]) => ({ lat, lng })));
    const withAltitude = await created({ name: 'High lot', geometry: { type: 'Polygon', coordinates: [large.map(([lng, lat]) => [lng, lat, 2240])] } });
    expect(withAltitude.vertices).toEqual(multi.vertices);
  });

  it('accepts every request example the OpenAPI document gives', async () => {
    const doc = (await t.json('/api/v1/openapi.json')).body;
    const examples = (method: 'post' | 'patch', path: string) => Object.values(doc.paths[path][method].requestBody.content['application/json'].examples) as Array<{ value: unknown }>;
    const own = (await t.fixtures.tenant()).key; // the examples' names, away from the other tests'
    const made = [];
    for (const { value } of examples('post', '/geofences')) {
      const res = await post(value, own);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.data.id);
    }
    expect(made).toHaveLength(3);
    for (const { value } of examples('patch', '/geofences/{id}')) expect((await patch(made[0], value, own)).status, JSON.stringify(value)).toBe(200);
  });

  it.each([
    ['2 distinct vertices', { name: 'A', type: 'polygon', vertices: square.slice(0, 2) }, /at least 3 distinct vertices, got 2/],
    ['3 vertices, 2 distinct', { name: 'A', type: 'polygon', vertices: [square[0], square[1], square[0], square[1]] }, /at least 3 distinct vertices, got 2/],
    ['crossing edges, saying where', { name: 'A', type: 'polygon', vertices: [{ lat: 0, lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }, { lat: 1, lng: 0 }] }, /cross themselves near lat 0\.500000, lng 0\.500000/],
    ['vertices on one line', { name: 'A', type: 'polygon', vertices: [{ lat: 0, lng: 0 }, { lat: 0, lng: 1 }, { lat: 0, lng: 2 }] }, /encloses less than 1 m²/],
    ['a vertex latitude out of range', { name: 'A', type: 'polygon', vertices: [{ lat: 91, lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }] }, /vertices\.0\.lat must be between -90 and 90, got 91/],
    ['a vertex longitude out of range', { name: 'A', type: 'polygon', vertices: [{ lat: 0, lng: 0 }, { lat: 1, lng: -180.5 }, { lat: 0, lng: 1 }] }, /vertices\.1\.lng must be between -180 and 180, got -180.5/],
    ['a vertex without lat', { name: 'A', type: 'polygon', vertices: [{ lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }] }, /vertices\.0\.lat is required/],
    ['a polygon across the antimeridian', { name: 'A', type: 'polygon', vertices: [{ lat: 0, lng: 179.9 }, { lat: 0, lng: -179.9 }, { lat: 1, lng: -179.9 }, { lat: 1, lng: 179.9 }] }, /spans 359\.8° of longitude.*antimeridian/],
    ['a center latitude out of range', { name: 'A', type: 'circle', center: { lat: -95, lng: 0 }, radiusMeters: 10 }, /center\.lat must be between -90 and 90, got -95/],
    ['a center longitude out of range', { name: 'A', type: 'circle', center: { lat: 0, lng: 181 }, radiusMeters: 10 }, /center\.lng must be between -180 and 180, got 181/],
    ['a radius of 0', { name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 0 }, /radiusMeters must be more than 0/],
    ['a negative radius', { name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: -5 }, /radiusMeters must be more than 0/],
    ['a radius over 100 km', { name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 100_001 }, /at most 100000 \(100 km\), got 100001/],
    ['a circle without center', { name: 'A', type: 'circle', radiusMeters: 10 }, /center is required for a circle/],
    ['a circle without radius', { name: 'A', type: 'circle', center: { lat: 0, lng: 0 } }, /radiusMeters is required for a circle/],
    ['a circle with vertices', { ...circle('A'), vertices: square }, /a circle takes center and radiusMeters, not vertices/],
    ['a polygon without vertices', { name: 'A', type: 'polygon' }, /vertices is required for a polygon/],
    ['a polygon with a radius', { name: 'A', type: 'polygon', vertices: square, radiusMeters: 5 }, /a polygon takes vertices, not center or radiusMeters/],
    ['an unknown type', { name: 'A', type: 'hexagon' }, /type: Invalid option: expected one of "circle"\|"polygon"/],
    ['no shape', { name: 'A' }, /give type \(circle or polygon\) with its fields, or a GeoJSON geometry/],
    ['shape fields without type', { name: 'A', center: { lat: 0, lng: 0 }, radiusMeters: 5 }, /type is required with center, radiusMeters or vertices/],
    ['both type and geometry', { ...circle('A'), geometry: { type: 'Polygon', coordinates: [] } }, /either geometry, or type with its fields, not both/],
    ['a GeoJSON Point', { name: 'A', geometry: { type: 'Point', coordinates: [0, 0] } }, /geometry\.type: Invalid option: expected one of "Polygon"\|"MultiPolygon"/],
    ['a GeoJSON Polygon without rings', { name: 'A', geometry: { type: 'Polygon', coordinates: [] } }, /geometry\.coordinates must be a polygon/],
    ['a GeoJSON ring not closed', { name: 'A', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] } }, /geometry\.coordinates\.0 is not closed/],
    ['a GeoJSON position of strings', { name: 'A', geometry: { type: 'Polygon', coordinates: [[['0', 0], [1, 0], [1, 1], ['0', 0]]] } }, /geometry\.coordinates\.0\.0 must be a position \[lng, lat\]/],
    ['a GeoJSON latitude out of range', { name: 'A', geometry: { type: 'MultiPolygon', coordinates: [[[[0, 0], [1, 0], [1, 95], [0, 0]]]] } }, /geometry\.coordinates\.0\.0\.2 has latitude 95, outside -90\.\.90/],
    ['a GeoJSON bow tie, saying where', { name: 'A', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 1], [0, 1], [1, 0], [0, 0]]] } }, /geometry is not valid: Self-intersection near lng 0\.5, lat 0\.5/],
    ['an empty name', { ...circle('A'), name: '' }, /name must be 1 to 200 characters/],
    ['a blank name', { ...circle('A'), name: '   ' }, /name must be 1 to 200 characters/],
    ['a name of 201 characters', { ...circle('A'), name: 'x'.repeat(201) }, /name must be 1 to 200 characters/],
    ['no name', { type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 5 }, /name is required/],
    ['a negative dwell time', { ...circle('A'), enterDwellSeconds: -1 }, /enterDwellSeconds: Too small/],
    ['a dwell time over a day', { ...circle('A'), exitDwellSeconds: 86_401 }, /exitDwellSeconds: Too big: expected number to be <=86400/],
    ['a fractional dwell time', { ...circle('A'), exitDwellSeconds: 1.5 }, /exitDwellSeconds must be an int/],
  ])('refuses %s, saying what is wrong (400)', async (_, body, message) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer).toMatchObject({ success: false, data: null });
    expect(answer.error).toMatch(message);
  });

  it('accepts the limits themselves: 100 km, 200 characters, a day of dwell; trims the name', async () => {
    const g = await created({ ...circle(` ${'x'.repeat(200)} `), radiusMeters: 100_000, enterDwellSeconds: 86_400, exitDwellSeconds: 0 });
    expect(g).toMatchObject({ name: 'x'.repeat(200), radiusMeters: 100_000, enterDwellSeconds: 86_400, exitDwellSeconds: 0 });
  });

  it('changes only what a PATCH gives', async () => {
    const g = await created({ ...circle(fresh('Partial')), enterDwellSeconds: 10 });
    const dwell = (await patch(g.id, { exitDwellSeconds: 30 })).body.data;
    expect(dwell).toEqual({ ...g, exitDwellSeconds: 30 });
    const renamed = (await patch(g.id, { name: 'Partial renamed' })).body.data;
    expect(renamed).toEqual({ ...dwell, name: 'Partial renamed' });
    const geojson = (await patch(g.id, { geometry: { type: 'Polygon', coordinates: [square.map((v) => [v.lng, v.lat]).concat([[square[0]!.lng, square[0]!.lat]])] } })).body.data;
    expect(geojson).toMatchObject({ id: g.id, name: 'Partial renamed', type: 'polygon', vertices: square, enterDwellSeconds: 10, exitDwellSeconds: 30 });
    expect((await patch(g.id, {})).body.data).toEqual(geojson);
  });

  it('refuses a bad PATCH whole, leaving the geofence as it was', async () => {
    const g = await created(circle(fresh('Kept')));
    for (const [body, message] of [
      [{ name: 'Fine', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 150_000 }, /100 km/],
      [{ name: 'Fine', type: 'polygon', vertices: square.slice(0, 2) }, /at least 3 distinct/],
      [{ type: 'circle' }, /center is required/],
      [{ radiusMeters: 10 }, /type is required/],
      [{ name: '' }, /name must be 1 to 200/],
      [{ exitDwellSeconds: 90_000 }, /exitDwellSeconds/],
    ] as const) {
      const res = await patch(g.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await get(g.id)).body.data).toEqual(g);
  });

  it('refuses a name the account already has (409), on create and on rename; another account may use it', async () => {
    const depot = await created(circle('Depot'));
    const again = await post(circle('Depot', 1, 1));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/a geofence named "Depot" already exists/);
    expect((await post(circle(' Depot '))).status).toBe(409); // the same name once trimmed
    expect((await post(circle('depot'))).status).toBe(201); // names are case-sensitive, as travels match them

    const other = await created(circle(fresh('Other')));
    const rename = await patch(other.id, { name: 'Depot' });
    expect(rename.status).toBe(409);
    expect((await get(other.id)).body.data.name).toBe(other.name);
    expect((await patch(depot.id, { name: 'Depot' })).status).toBe(200); // its own name is no conflict

    const stranger = await t.fixtures.tenant();
    expect((await post(circle('Depot'), stranger.key)).status).toBe(201);
  });

  it("answers 404 for an unknown id and for another account's geofence, 400 for an id that is not one", async () => {
    const g = await created(circle(fresh('Mine')));
    const stranger = await t.fixtures.tenant();
    for (const id of [g.id, 2_000_000_000]) {
      const as = id === g.id ? stranger.key : key;
      expect((await get(id, as)).status).toBe(404);
      expect((await patch(id, { name: 'Taken over' }, as)).status).toBe(404);
      expect((await remove(id, as)).status).toBe(404);
    }
    expect((await get(g.id, stranger.key)).body.error).toBe(`Geofence not found: ${g.id}`);
    expect((await get(g.id)).body.data).toEqual(g); // untouched by the stranger's attempts
    for (const id of ['abc', '0', '1.5', '99999999999']) expect((await get(id)).status, id).toBe(400);
  });

  it('needs geofences:read to read one, geofences:write to write; every user of the account shares them in the key\'s mode', async () => {
    const g = await created(circle(fresh('Shared')));
    const keyWith = async (permissions: string[], userId = tenant.user.id) => (await t.fixtures.key(userId, { permissions })).key;
    const reader = await keyWith(['geofences:read']);
    const writer = await keyWith(['geofences:write']);
    const neither = await keyWith(['devices:read']);

    expect((await get(g.id, reader)).status).toBe(200);
    expect((await get(g.id, writer)).status).toBe(403);
    expect((await get(g.id, neither)).status).toBe(403);
    for (const as of [reader, neither]) {
      expect((await post(circle(fresh('Refused')), as)).status).toBe(403);
      expect((await patch(g.id, { name: 'Refused' }, as)).status).toBe(403);
      expect((await remove(g.id, as)).status).toBe(403);
    }
    expect((await post(circle(fresh('Written')), writer)).status).toBe(201);

    // Another user of the same account, with a live key: sees and changes the same geofence; with a test key, not at all.
    const colleague = await t.fixtures.user(tenant.account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    expect((await get(g.id, colleagueKey)).body.data).toEqual(g);
    expect((await patch(g.id, { exitDwellSeconds: 5 }, colleagueKey)).status).toBe(200);
    expect((await get(g.id)).body.data.exitDwellSeconds).toBe(5);
    const colleagueTestKey = (await t.fixtures.key(colleague.id, { mode: 'test' })).key;
    expect((await get(g.id, colleagueTestKey)).status).toBe(404);
    expect((await patch(g.id, { exitDwellSeconds: 9 }, colleagueTestKey)).status).toBe(404);
  });

  it("refuses to delete a pending waypoint of an active travel (409), and keeps a finished waypoint's name", async () => {
    const [first, second] = [await created(circle(fresh('Stop'))), await created(circle(fresh('Stop')))];
    const vehicle = await t.fixtures.device(tenant.account.id, { userIds: [tenant.user.id] });
    const travel = await t.json('/api/v1/travels', {
      key, method: 'POST',
      body: { vehicle: vehicle.name, startTime: '01/05/2030 08:00', waypoints: [{ geofence: first.name, expectedArrival: '01/05/2030 09:00' }, { geofence: second.name, expectedArrival: '01/05/2030 10:00' }] },
    });
    expect(travel.status).toBe(200);
    const travelId = travel.body.data.travelId;

    // Scheduled: both are pending waypoints.
    const refused = await remove(first.id);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(`geofence ${first.id} is a pending waypoint of active travel ${travelId}; cancel the travel first`);
    expect((await get(first.id)).status).toBe(200);

    // In progress with the first waypoint reached: that one may go; the second still may not.
    const db = t.database.db;
    await db.updateTable('travels').set({ status: TravelStatus.InProgress, started_at: new Date() }).where('id', '=', travelId).execute();
    await db.updateTable('travel_waypoints').set({ status: 'completed', arrived_at: new Date() }).where('travel_id', '=', travelId).where('seq', '<=', 2).execute();
    expect((await remove(first.id)).status).toBe(200);
    expect((await remove(second.id)).status).toBe(409);
    const view = (await t.json(`/api/v1/travels/${travelId}`, { key })).body.data;
    expect(view.waypoints.map((w: any) => [w.geofence, w.status])).toEqual([['Current position', 'Completed'], [first.name, 'Completed'], [second.name, 'Pending']]);

    // Cancelled: nothing is pending any more; the travel keeps both names.
    expect((await t.json(`/api/v1/travels/${travelId}`, { key, method: 'DELETE' })).status).toBe(200);
    expect((await remove(second.id)).status).toBe(200);
    const after = (await t.json(`/api/v1/travels/${travelId}`, { key })).body.data;
    expect(after.waypoints.map((w: any) => w.geofence)).toEqual(['Current position', first.name, second.name]);
  });
});
