import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { DeviceMode } from '../../db/schema.ts';

/**
 * Every row of what one account keeps in one mode, as text: vehicles, who may see them, their odometer baselines and maintenance items and services, geofences,
 * drivers and their assignments, travels and their waypoints, webhooks and their deliveries, commands,
 * the account's users (in both modes' snapshots: they are the account's), API keys, OAuth clients and their tokens, the event log and the audit log,
 * notification rules and their deliveries, report emails, and the users' notification addresses and browsers. Two equal snapshots mean nothing of the scope was written
 * between them. `last_used_at` is left out: a key's use is recorded after its request, not by it.
 */
export async function scopeSnapshot(db: Db, accountId: number, mode: DeviceMode): Promise<string> {
  const { rows } = await sql<{ snapshot: unknown }>`
    WITH d AS (SELECT * FROM devices WHERE account_id = ${accountId} AND mode = ${mode}),
    dr AS (SELECT * FROM drivers WHERE account_id = ${accountId} AND mode = ${mode}),
    tr AS (SELECT t.* FROM travels t WHERE t.device_id IN (SELECT id FROM d)),
    wh AS (SELECT * FROM webhooks WHERE account_id = ${accountId} AND mode = ${mode}),
    k AS (SELECT k.* FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.account_id = ${accountId} AND k.mode = ${mode}),
    oc AS (SELECT c.* FROM oauth_clients c JOIN users u ON u.id = c.user_id WHERE u.account_id = ${accountId} AND c.mode = ${mode})
    SELECT jsonb_build_object(
      'devices', (SELECT jsonb_agg(to_jsonb(d) ORDER BY d.id) FROM d),
      'grants', (SELECT jsonb_agg(to_jsonb(g) ORDER BY g.device_id, g.user_id) FROM user_devices g WHERE g.device_id IN (SELECT id FROM d)),
      'groups', (SELECT jsonb_agg(to_jsonb(g) ORDER BY g.id) FROM vehicle_groups g WHERE g.account_id = ${accountId} AND g.mode = ${mode}),
      'group_vehicles', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.group_id, x.device_id) FROM vehicle_group_devices x
        WHERE x.group_id IN (SELECT id FROM vehicle_groups WHERE account_id = ${accountId} AND mode = ${mode})),
      'group_users', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.group_id, x.user_id) FROM user_vehicle_groups x
        WHERE x.group_id IN (SELECT id FROM vehicle_groups WHERE account_id = ${accountId} AND mode = ${mode})),
      'baselines', (SELECT jsonb_agg(to_jsonb(b) ORDER BY b.device_id) FROM vehicle_baselines b WHERE b.device_id IN (SELECT id FROM d)),
      'maintenance', (SELECT jsonb_agg(to_jsonb(m) ORDER BY m.id) FROM maintenance_items m WHERE m.device_id IN (SELECT id FROM d)),
      'services', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM maintenance_services x WHERE x.item_id IN (SELECT m.id FROM maintenance_items m WHERE m.device_id IN (SELECT id FROM d))),
      'geofences', (SELECT jsonb_agg(to_jsonb(g) ORDER BY g.id) FROM geofences g WHERE g.account_id = ${accountId} AND g.mode = ${mode}),
      'drivers', (SELECT jsonb_agg(to_jsonb(dr) ORDER BY dr.id) FROM dr),
      'assignments', (SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM driver_assignments a WHERE a.driver_id IN (SELECT id FROM dr) OR a.device_id IN (SELECT id FROM d)),
      'travels', (SELECT jsonb_agg(to_jsonb(tr) ORDER BY tr.id) FROM tr),
      'waypoints', (SELECT jsonb_agg(to_jsonb(w) ORDER BY w.travel_id, w.seq) FROM travel_waypoints w WHERE w.travel_id IN (SELECT id FROM tr)),
      'webhooks', (SELECT jsonb_agg(to_jsonb(wh) ORDER BY wh.id) FROM wh),
      'deliveries', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM webhook_deliveries x WHERE x.webhook_id IN (SELECT id FROM wh)),
      'commands', (SELECT jsonb_agg(to_jsonb(c) ORDER BY c.id) FROM commands c WHERE c.device_id IN (SELECT id FROM d)),
      'users', (SELECT jsonb_agg(to_jsonb(u) ORDER BY u.id) FROM users u WHERE u.account_id = ${accountId}),
      'keys', (SELECT jsonb_agg(to_jsonb(k) - 'last_used_at' ORDER BY k.id) FROM k),
      'clients', (SELECT jsonb_agg(to_jsonb(oc) - 'last_used_at' ORDER BY oc.id) FROM oc),
      'tokens', (SELECT jsonb_agg(to_jsonb(t) ORDER BY t.id) FROM oauth_tokens t WHERE t.client_id IN (SELECT id FROM oc)),
      'events', (SELECT jsonb_agg(to_jsonb(e) ORDER BY e.id) FROM events e WHERE e.account_id = ${accountId} AND e.mode = ${mode}),
      'audit', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM audit_log x WHERE x.account_id = ${accountId} AND x.mode = ${mode}),
      'notification_rules', (SELECT jsonb_agg(to_jsonb(r) ORDER BY r.id) FROM notification_rules r WHERE r.account_id = ${accountId} AND r.mode = ${mode}),
      'notification_deliveries', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM notification_deliveries x
        WHERE x.rule_id IN (SELECT id FROM notification_rules WHERE account_id = ${accountId} AND mode = ${mode})),
      'report_subscriptions', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM report_subscriptions x WHERE x.account_id = ${accountId} AND x.mode = ${mode}),
      'notification_channels', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.user_id) FROM notification_channels x JOIN users u ON u.id = x.user_id WHERE u.account_id = ${accountId}),
      'push_subscriptions', (SELECT jsonb_agg(to_jsonb(x) ORDER BY x.id) FROM push_subscriptions x JOIN users u ON u.id = x.user_id WHERE u.account_id = ${accountId})
    ) AS snapshot
  `.execute(db);
  return JSON.stringify(rows[0]!.snapshot);
}
