/**
 * The write operations of the API as test/account-isolation.test.ts walks them: for each, the requests a
 * key makes at another scope's objects (another account's, or its own account's other mode), each with
 * the same request at objects that exist nowhere. The two must be answered alike, so a key can neither
 * change another scope's objects nor tell that they exist. The test fails for an operation of the
 * OpenAPI document that has no entry here, so a new route cannot be left out.
 */

export interface IsolationScope {
  label: string;
  account: 'A' | 'B';
  accountId: number;
  userId: number;
  /** The user's email, and a sign-in session of theirs (live, as every session; the same for both modes of the account). */
  email: string;
  session: { id: string; cookie: string; csrf: string };
  /** The prefix of the key and the id of the OAuth client this scope minted: its user's, whose session lists them in both modes. */
  credentials: string[];
  mode: 'live' | 'test';
  key: string;
  /** Strings found only in this scope's data (IMEI, plates, coordinates, URL, phone, key prefix, client id). */
  markers: string[];
  /** The ids its paths take. */
  ids: {
    vehicle: string; geofence: string; travel: string; driver: string; webhook: string; delivery: string; command: string; apiKey: string; oauthClient: string;
    maintenance: string; media: string; group: string; user: string;
    /** A notification rule; a report email of the user in this mode; a browser of the user (the user is both modes'). */
    notificationRule: string; reportSubscription: string; pushSubscription: string;
  };
  /** What no other scope has a namesake of: a vehicle with no travel (and its IMEI), a geofence, a driver's identifier, a webhook URL, a command's idempotency key. */
  only: { van: string; vanImei: string; yard: string; identifier: string; url: string; idempotencyKey: string };
}

export interface Request {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface WriteAttempt extends Request {
  /** What is tried, for the failure message. */
  what: string;
  /** The status the attempt must get. A request whose headers carry a session cookie is sent without the key. */
  status: number;
  /**
   * The same request at objects that exist nowhere: it must get the same status and, ids aside, the same
   * error. Absent only where the server must tell (`error` is then the whole answer allowed).
   */
  nowhere?: Omit<Request, 'method'>;
  error?: string;
  /** A request that creates in the caller's own scope: how to remove what it made, so later attempts meet the same scene. */
  undo?: (data: any) => Request;
}

export type WriteCase = (attacker: IsolationScope, victim: IsolationScope) => WriteAttempt[];

/** Ids, IMEIs and names that no scope has. */
const NO_ID = '999999999';
const NO_IMEI = '359999999999999';
const NO_SESSION = '00000000-0000-4000-8000-000000000000';
let fresh = 0;
const freshImei = () => `35888${String(process.pid % 100_000).padStart(5, '0')}${String(++fresh).padStart(5, '0')}`;
const unique = (what: string) => `${what} ${process.pid}-${++fresh}`;

const at = (method: string, path: string, status = 404, body?: unknown): WriteAttempt => ({ what: `${method} ${path}`, method, path, body, status });

/** The same request at an object of another scope and at one that exists nowhere: 404 both. */
function byPath(method: string, template: string, victimIds: Record<string, string>, body?: unknown): WriteAttempt {
  const fill = (ids: Record<string, string>) => template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
  const nowhereIds = Object.fromEntries(Object.keys(victimIds).map((k) => [k, NO_ID]));
  return { ...at(method, fill(victimIds), 404, body), what: `${method} ${template} of the victim`, nowhere: { path: fill(nowhereIds), body } };
}

/** An attempt a test-mode key is refused outright (403), at another scope's object as at none. */
const testRefused = (a: IsolationScope, attempt: WriteAttempt): WriteAttempt => (a.mode === 'test' ? { ...attempt, status: 403 } : attempt);

const later = new Date(Date.now() + 2 * 86_400_000);
const local = (d: Date) => `${String(d.getUTCDate()).padStart(2, '0')}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${d.getUTCFullYear()} 08:00`;
const travel = (vehicle: string, geofence: string) => ({ vehicle, startTime: local(later), waypoints: [{ geofence, expectedArrival: local(new Date(later.getTime() + 86_400_000)) }] });
const circle = (name: string) => ({ name, type: 'circle', center: { lat: 10.5, lng: 10.5 }, radiusMeters: 100 });

export const WRITE_CASES: Record<string, WriteCase> = {
  'POST /geofences': (_a, v) => [{
    what: 'a geofence named as the victim\'s', method: 'POST', path: '/geofences', body: circle(v.only.yard), status: 201,
    nowhere: { path: '/geofences', body: circle(unique('Nowhere yard')) }, undo: (g) => ({ method: 'DELETE', path: `/geofences/${g.id}` }),
  }],
  'PATCH /geofences/{id}': (_a, v) => [byPath('PATCH', '/geofences/{id}', { id: v.ids.geofence }, { name: 'Taken over', exitDwellSeconds: 60 })],
  'DELETE /geofences/{id}': (_a, v) => [byPath('DELETE', '/geofences/{id}', { id: v.ids.geofence })],

  'POST /travels': (a, v) => [
    { what: 'a travel of the victim\'s vehicle', method: 'POST', path: '/travels', body: travel(v.only.van, 'Depot'), status: 400, nowhere: { path: '/travels', body: travel('No such van', 'Depot') } },
    { what: 'a travel through the victim\'s geofence', method: 'POST', path: '/travels', body: travel(a.only.van, v.only.yard), status: 400, nowhere: { path: '/travels', body: travel(a.only.van, 'No such yard') } },
  ],
  'DELETE /travels/{id}': (_a, v) => [byPath('DELETE', '/travels/{id}', { id: v.ids.travel })],

  'POST /webhooks': (_a, v) => [{
    what: 'a webhook to the victim\'s URL', method: 'POST', path: '/webhooks', body: { url: v.only.url, events: ['*'] }, status: 201,
    nowhere: { path: '/webhooks', body: { url: `http://127.0.0.1:9/${unique('nowhere').replace(' ', '-')}`, events: ['*'] } },
    undo: (w) => ({ method: 'DELETE', path: `/webhooks/${w.id}` }),
  }],
  'PATCH /webhooks/{id}': (_a, v) => [byPath('PATCH', '/webhooks/{id}', { id: v.ids.webhook }, { description: 'Taken over', enabled: false })],
  'DELETE /webhooks/{id}': (_a, v) => [byPath('DELETE', '/webhooks/{id}', { id: v.ids.webhook })],
  'POST /webhooks/{id}/rotate-secret': (_a, v) => [byPath('POST', '/webhooks/{id}/rotate-secret', { id: v.ids.webhook })],
  'POST /webhooks/{id}/test': (_a, v) => [byPath('POST', '/webhooks/{id}/test', { id: v.ids.webhook })],
  'POST /webhooks/{id}/deliveries/{deliveryId}/retry': (a, v) => [
    byPath('POST', '/webhooks/{id}/deliveries/{deliveryId}/retry', { id: v.ids.webhook, deliveryId: v.ids.delivery }),
    {
      ...at('POST', `/webhooks/${a.ids.webhook}/deliveries/${v.ids.delivery}/retry`), what: 'the victim\'s delivery under the caller\'s own webhook',
      nowhere: { path: `/webhooks/${a.ids.webhook}/deliveries/${NO_ID}/retry` },
    },
  ],

  'POST /vehicles': (a, v) => [
    {
      // A tracker is known by its IMEI alone, whichever account registered it: the one thing a caller can learn.
      what: 'a vehicle with the victim\'s IMEI', method: 'POST', path: '/vehicles', body: { imei: v.ids.vehicle, name: unique('Grabbed'), plates: 'X' }, status: 409,
      error: `a device with IMEI ${v.ids.vehicle} already exists`,
    },
    {
      what: 'a vehicle named as the victim\'s', method: 'POST', path: '/vehicles', body: { imei: freshImei(), name: v.only.van, plates: 'X', protocol: 'teltonika' }, status: 201,
      nowhere: { path: '/vehicles', body: { imei: freshImei(), name: unique('Nowhere van'), plates: 'X', protocol: 'teltonika' } },
      undo: (d) => ({ method: 'DELETE', path: `/vehicles/${d.id}` }),
    },
    // Users belong to an account, not to a mode: the victim's user is the caller's own in the other mode.
    ...(a.account === v.account ? [] : [{
      what: 'a vehicle shown to the victim\'s user', method: 'POST', path: '/vehicles', body: { imei: freshImei(), name: unique('Shared'), plates: 'X', user_ids: [v.userId] }, status: 400,
      nowhere: { path: '/vehicles', body: { imei: freshImei(), name: unique('Shared'), plates: 'X', user_ids: [Number(NO_ID)] } },
    }]),
  ],
  'PATCH /vehicles/{id}': (a, v) => [
    byPath('PATCH', '/vehicles/{id}', { id: v.ids.vehicle }, { name: 'Taken over', plates: 'TAKEN' }),
    ...(a.account === v.account ? [] : [{
      ...at('PATCH', `/vehicles/${a.only.vanImei}`, 400, { user_ids: [v.userId] }), what: 'the caller\'s vehicle shown to the victim\'s user',
      nowhere: { path: `/vehicles/${a.only.vanImei}`, body: { user_ids: [Number(NO_ID)] } },
    }]),
  ],
  'DELETE /vehicles/{id}': (_a, v) => [byPath('DELETE', '/vehicles/{id}', { id: v.ids.vehicle })],
  'PUT /vehicles/{id}/accumulators': (_a, v) => [byPath('PUT', '/vehicles/{id}/accumulators', { id: v.ids.vehicle }, { odometerKm: 999_999, engineHours: 9_999 })],

  'POST /drivers': (_a, v) => [{
    what: 'a driver with the victim\'s identifier', method: 'POST', path: '/drivers', body: { name: 'Carl', identifier: v.only.identifier }, status: 201,
    nowhere: { path: '/drivers', body: { name: 'Carl', identifier: `NOWHERE-${++fresh}` } }, undo: (d) => ({ method: 'DELETE', path: `/drivers/${d.id}` }),
  }],
  'PATCH /drivers/{id}': (_a, v) => [byPath('PATCH', '/drivers/{id}', { id: v.ids.driver }, { name: 'Taken over' })],
  'DELETE /drivers/{id}': (_a, v) => [byPath('DELETE', '/drivers/{id}', { id: v.ids.driver })],
  'POST /drivers/{id}/assignment': (a, v) => [
    byPath('POST', '/drivers/{id}/assignment', { id: v.ids.driver }, { vehicleId: a.only.vanImei }),
    {
      ...at('POST', `/drivers/${a.ids.driver}/assignment`, 404, { vehicleId: v.ids.vehicle }), what: 'the caller\'s driver onto the victim\'s vehicle',
      nowhere: { path: `/drivers/${a.ids.driver}/assignment`, body: { vehicleId: NO_IMEI } },
    },
  ],
  'DELETE /drivers/{id}/assignment': (_a, v) => [byPath('DELETE', '/drivers/{id}/assignment', { id: v.ids.driver })],

  'POST /commands': (a, v) => [
    { ...at('POST', '/commands', 404, { deviceId: v.ids.vehicle, type: 'siren_on' }), what: 'a command to the victim\'s vehicle', nowhere: { path: '/commands', body: { deviceId: NO_IMEI, type: 'siren_on' } } },
    {
      ...at('POST', '/commands', 202, { deviceId: a.only.vanImei, type: 'siren_off', idempotencyKey: v.only.idempotencyKey }), what: 'a command with the victim\'s idempotency key',
      nowhere: { path: '/commands', body: { deviceId: a.only.vanImei, type: 'siren_off', idempotencyKey: unique('nowhere') } },
      undo: (c) => ({ method: 'DELETE', path: `/commands/${c.id}` }),
    },
  ],
  'DELETE /commands/{id}': (_a, v) => [byPath('DELETE', '/commands/{id}', { id: v.ids.command })],

  'POST /maintenance': (_a, v) => [{
    ...at('POST', '/maintenance', 404, { vehicleId: v.ids.vehicle, name: 'Grabbed', kind: 'odometer', interval: 10, from: 0 }), what: 'an item on the victim\'s vehicle',
    nowhere: { path: '/maintenance', body: { vehicleId: NO_IMEI, name: 'Grabbed', kind: 'odometer', interval: 10, from: 0 } },
  }],
  'PATCH /maintenance/{id}': (_a, v) => [byPath('PATCH', '/maintenance/{id}', { id: v.ids.maintenance }, { name: 'Taken over', nextDue: 1 })],
  'DELETE /maintenance/{id}': (_a, v) => [byPath('DELETE', '/maintenance/{id}', { id: v.ids.maintenance })],
  'POST /maintenance/{id}/services': (_a, v) => [byPath('POST', '/maintenance/{id}/services', { id: v.ids.maintenance }, { odometerKm: 1, note: 'Taken over' })],

  // A group names vehicles by IMEI: the victim's answers as one that exists nowhere (400, same words).
  'POST /groups': (_a, v) => [{
    ...at('POST', '/groups', 400, { name: unique('Grabbed'), vehicle_ids: [v.ids.vehicle] }), what: 'a group holding the victim\'s vehicle',
    nowhere: { path: '/groups', body: { name: unique('Grabbed'), vehicle_ids: [NO_IMEI] } },
  }],
  'PATCH /groups/{id}': (_a, v) => [byPath('PATCH', '/groups/{id}', { id: v.ids.group }, { name: 'Taken over', vehicle_ids: [] })],
  'DELETE /groups/{id}': (_a, v) => [byPath('DELETE', '/groups/{id}', { id: v.ids.group })],

  // Users are the account's, in both modes: another account's answer 404 as ids that exist nowhere;
  // the account's own (the other mode's key has the same user) are no other scope's objects. A test
  // key changes no user at all (403, wherever it aims), so it cannot reach live mode through them.
  'POST /users': (a, v) => (a.accountId === v.accountId ? [] : [{
    what: 'a user', method: 'POST', path: '/users', body: { email: `${unique('iso').replace(/\W/g, '-')}@example.test`, timezone: 'UTC' }, status: a.mode === 'test' ? 403 : 201,
    nowhere: { path: '/users', body: { email: `${unique('iso').replace(/\W/g, '-')}@example.test`, timezone: 'UTC' } }, undo: (u) => ({ method: 'DELETE', path: `/users/${u.id}` }),
  }]),
  'PATCH /users/{id}': (a, v) => (a.accountId === v.accountId ? [] : [testRefused(a, byPath('PATCH', '/users/{id}', { id: v.ids.user }, { name: 'Taken over', role: 'viewer' }))]),
  'DELETE /users/{id}': (a, v) => (a.accountId === v.accountId ? [] : [testRefused(a, byPath('DELETE', '/users/{id}', { id: v.ids.user }))]),
  'POST /users/{id}/sign-in-link': (a, v) => (a.accountId === v.accountId ? [] : [testRefused(a, byPath('POST', '/users/{id}/sign-in-link', { id: v.ids.user }))]),
  // Names nothing but the caller's own user.
  'PATCH /users/me': () => [],

  // A rule names the account's vehicles, groups, geofences and users of its mode: the victim's answer
  // as ones that exist nowhere (400, same words). The victim's user is the caller's own in the other mode.
  'POST /notification-rules': (a, v) => {
    const rule = (change: Record<string, unknown>) => ({
      name: unique('Grabbed'), events: ['vehicle.panic'], vehicles: { scope: 'all' }, recipients: [{ userId: a.userId, channels: ['email'] }], ...change,
    });
    const attempt = (what: string, victims: Record<string, unknown>, nowhere: Record<string, unknown>): WriteAttempt => ({
      ...at('POST', '/notification-rules', 400, rule(victims)), what, nowhere: { path: '/notification-rules', body: rule(nowhere) },
    });
    return [
      attempt('a rule for the victim\'s vehicle', { vehicles: { scope: 'list', vehicleIds: [v.ids.vehicle] } }, { vehicles: { scope: 'list', vehicleIds: [NO_IMEI] } }),
      attempt('a rule for the victim\'s group', { vehicles: { scope: 'groups', groupIds: [Number(v.ids.group)] } }, { vehicles: { scope: 'groups', groupIds: [Number(NO_ID)] } }),
      attempt('a rule at the victim\'s geofence', { geofenceIds: [Number(v.ids.geofence)] }, { geofenceIds: [Number(NO_ID)] }),
      ...(a.accountId === v.accountId ? [] : [
        attempt('a rule notifying the victim\'s user', { recipients: [{ userId: v.userId, channels: ['email'] }] }, { recipients: [{ userId: Number(NO_ID), channels: ['email'] }] }),
      ]),
    ];
  },
  'PATCH /notification-rules/{id}': (_a, v) => [byPath('PATCH', '/notification-rules/{id}', { id: v.ids.notificationRule }, { name: 'Taken over', enabled: false })],
  'DELETE /notification-rules/{id}': (_a, v) => [byPath('DELETE', '/notification-rules/{id}', { id: v.ids.notificationRule })],
  // Name nothing but the caller's own user (a push endpoint is the browser's own secret).
  'PATCH /users/me/notification-channels': () => [],
  'POST /users/me/push-subscriptions': () => [],
  // A browser is its user's, in both modes: another account's answers 404 as one that exists nowhere; a test key changes none (403).
  'DELETE /users/me/push-subscriptions/{id}': (a, v) => (a.accountId === v.accountId ? [] : [testRefused(a, byPath('DELETE', '/users/me/push-subscriptions/{id}', { id: v.ids.pushSubscription }))]),
  // A report email is its user's in one mode: the victim's (another user's, or the caller's own of the other mode) is not found.
  'POST /users/me/report-subscriptions': () => [{
    what: 'a report email', method: 'POST', path: '/users/me/report-subscriptions', body: { frequency: 'daily', reports: ['trips'], time: '06:00' }, status: 201,
    nowhere: { path: '/users/me/report-subscriptions', body: { frequency: 'daily', reports: ['trips'], time: '06:00' } },
    undo: (r) => ({ method: 'DELETE', path: `/users/me/report-subscriptions/${r.id}` }),
  }],
  'PATCH /users/me/report-subscriptions/{id}': (_a, v) => [byPath('PATCH', '/users/me/report-subscriptions/{id}', { id: v.ids.reportSubscription }, { time: '05:00', enabled: false })],
  'DELETE /users/me/report-subscriptions/{id}': (_a, v) => [byPath('DELETE', '/users/me/report-subscriptions/{id}', { id: v.ids.reportSubscription })],

  // Minting names nothing of another scope: the new credential must land in the caller's own scope only.
  'POST /api-keys': () => [{
    what: 'a key', method: 'POST', path: '/api-keys', body: { name: 'minted again', permissions: ['devices:read'] }, status: 201,
    nowhere: { path: '/api-keys', body: { name: 'minted again', permissions: ['devices:read'] } }, undo: (k) => ({ method: 'DELETE', path: `/api-keys/${k.id}` }),
  }],
  'DELETE /api-keys/{id}': (_a, v) => [byPath('DELETE', '/api-keys/{id}', { id: v.ids.apiKey })],
  'POST /oauth-clients': () => [{
    what: 'an OAuth client', method: 'POST', path: '/oauth-clients', body: { name: 'partner again', scopes: ['devices:read'] }, status: 201,
    nowhere: { path: '/oauth-clients', body: { name: 'partner again', scopes: ['devices:read'] } }, undo: (c) => ({ method: 'DELETE', path: `/oauth-clients/${c.id}` }),
  }],
  'DELETE /oauth-clients/{id}': (_a, v) => [byPath('DELETE', '/oauth-clients/{id}', { id: v.ids.oauthClient })],
  'POST /events/stream-tokens': () => [{ what: 'a stream token', method: 'POST', path: '/events/stream-tokens', status: 201, nowhere: { path: '/events/stream-tokens' } }],

  // Sessions are a user's, in live mode: another account's user's email answers a wrong password as an
  // email of no one does (once per victim account, to stay under the failed sign-ins a minute allows).
  'POST /auth/sign-in': (a, v) => (a.account === v.account || v.mode !== 'live' ? [] : [{
    what: 'the victim\'s email with a wrong password', method: 'POST', path: '/auth/sign-in', body: { email: v.email, password: 'not the password' }, status: 401,
    nowhere: { path: '/auth/sign-in', body: { email: `${unique('nobody').replace(/\W/g, '-')}@example.test`, password: 'not the password' } },
  }]),
  // A one-time token is known only to whom it was given; it names nothing of a scope.
  'POST /auth/set-password': () => [],
  // Open only at a server started with no account (not this one); it names nothing of a scope.
  'POST /auth/setup': () => [],
  // Name nothing but the caller's own session and user.
  'POST /auth/sign-out': () => [],
  'POST /auth/sign-out-everywhere': () => [],
  'POST /auth/password': () => [],
  // With an API key every session endpoint answers 400; with the caller's own session, another user's session is one that exists nowhere.
  'DELETE /auth/sessions/{id}': (a, v) => {
    if (a.account === v.account) return [];
    const withSession = { Cookie: a.session.cookie, 'X-CSRF-Token': a.session.csrf };
    return [
      { ...at('DELETE', `/auth/sessions/${v.session.id}`), what: 'the victim\'s session, by the caller\'s session', headers: withSession, nowhere: { path: `/auth/sessions/${NO_SESSION}`, headers: withSession } },
      { ...at('DELETE', `/auth/sessions/${v.session.id}`, 400), what: 'the victim\'s session, by a key', nowhere: { path: `/auth/sessions/${NO_SESSION}` } },
    ];
  },
};
