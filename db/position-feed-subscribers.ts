import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { FeedVehicle } from '../domain/events/position-feed.ts';

/** An enabled webhook that names `vehicle.position`, with what signs its requests. */
export interface PositionWebhook {
  id: number;
  accountId: number;
  url: string;
  /** The current secret, and the previous one while a rotation lasts. */
  secrets: string[];
  /** The vehicles its owner sees in its mode, by device id. */
  vehicles: Map<number, FeedVehicle>;
}

/**
 * Every enabled webhook subscribed to `vehicle.position` by name (the kind is opt-in: `*` and
 * `vehicle.*` do not take it), with the vehicles each may receive: its user's, in its account and mode.
 */
export async function positionWebhooks(db: Db): Promise<PositionWebhook[]> {
  const hooks = await db
    .selectFrom('webhooks')
    .select(['id', 'account_id', 'url', 'secret', 'previous_secret', 'previous_secret_expires_at'])
    .where('enabled', '=', true)
    .where((eb) => eb(eb.val('vehicle.position'), '=', eb.fn.any('events')))
    .orderBy('id')
    .execute();
  if (hooks.length === 0) return [];
  const rows = await db
    .selectFrom('webhooks as w')
    .innerJoin('user_devices as ud', 'ud.user_id', 'w.user_id')
    .innerJoin('devices as d', (join) => join.onRef('d.id', '=', 'ud.device_id').onRef('d.account_id', '=', 'w.account_id').onRef('d.mode', '=', 'w.mode'))
    .select(['w.id as webhook_id', 'd.id', 'd.imei', 'd.name', 'd.plates'])
    .where('w.id', 'in', hooks.map((h) => h.id))
    .execute();
  const now = Date.now();
  const byId = new Map<number, PositionWebhook>();
  for (const h of hooks) {
    const secrets = [h.secret];
    if (h.previous_secret && h.previous_secret_expires_at && h.previous_secret_expires_at.getTime() > now) secrets.push(h.previous_secret);
    byId.set(h.id, { id: h.id, accountId: h.account_id, url: h.url, secrets, vehicles: new Map() });
  }
  for (const r of rows) byId.get(r.webhook_id)!.vehicles.set(r.id, { id: r.imei, name: r.name, plates: r.plates, imei: r.imei });
  return [...byId.values()];
}

/** The vehicles a key sees, by device id, as a `vehicle.position` stream names them. */
export async function feedVehicles(db: Db, scope: AccessScope): Promise<Map<number, FeedVehicle>> {
  const rows = await db
    .selectFrom('devices as d')
    .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
    .select(['d.id', 'd.imei', 'd.name', 'd.plates'])
    .where('d.account_id', '=', scope.accountId)
    .where('d.mode', '=', scope.mode)
    .execute();
  return new Map(rows.map((r) => [r.id, { id: r.imei, name: r.name, plates: r.plates, imei: r.imei }]));
}
