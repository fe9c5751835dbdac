import { sql } from 'kysely';
import type { Db } from './database.ts';
import { deviceOfflineEvent, deviceOnlineEvent, type NewEvent } from '../domain/events/event-payloads.ts';
import { appendEvents } from './event-log.ts';

/** A tracker connection identified as a device (online), or closed after it was (offline). */
export interface PresenceChange {
  kind: 'online' | 'offline';
  deviceId: number;
  /** Made up by ingest for each connection. */
  connectionId: string;
  /** Server time. */
  at: Date;
  protocol: string;
  remoteAddress: string | null;
  /** Why an offline connection closed. */
  reason?: string;
}

export interface OpenConnection {
  connectionId: string;
  protocol: string;
  remoteAddress: string | null;
  since: Date;
}

export const REPLACED_REASON = 'replaced by a newer connection';

/**
 * The events of presence changes in order, given each device's open connection as stored: a device
 * has at most one. An online over another open connection first closes that one (`replaced by a newer
 * connection`: the tracker reconnected to another ingest process, or before a crash nobody logged);
 * an offline counts only for the device's open connection, so one that closes after a newer took
 * over logs nothing. Updates `open` to what it becomes.
 */
export function presenceEvents(open: Map<number, OpenConnection | null>, changes: readonly PresenceChange[]): NewEvent[] {
  const events: NewEvent[] = [];
  for (const c of changes) {
    const current = open.get(c.deviceId) ?? null;
    if (c.kind === 'online') {
      if (current?.connectionId === c.connectionId) continue;
      if (current) events.push(deviceOfflineEvent(c.deviceId, current, c.at, REPLACED_REASON));
      open.set(c.deviceId, { connectionId: c.connectionId, protocol: c.protocol, remoteAddress: c.remoteAddress, since: c.at });
      events.push(deviceOnlineEvent(c.deviceId, c, c.at));
    } else if (current?.connectionId === c.connectionId) {
      open.set(c.deviceId, null);
      events.push(deviceOfflineEvent(c.deviceId, current, c.at, c.reason ?? 'closed'));
    }
  }
  return events;
}

/**
 * Records presence changes and logs their events, in one transaction. The devices' rows are locked in
 * id order first, so ingest processes recording the same device take turns (and never deadlock), each
 * deciding against what the previous one committed. Returns the events logged.
 */
export async function recordPresence(db: Db, changes: readonly PresenceChange[]): Promise<number> {
  if (changes.length === 0) return 0;
  const ids = [...new Set(changes.map((c) => c.deviceId))].sort((a, b) => a - b);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number; connection_id: string | null; protocol: string | null; remote_address: string | null; connected_at: Date | null }>`
      SELECT d.id, c.connection_id, c.protocol, c.remote_address, c.connected_at
      FROM devices d LEFT JOIN device_connections c ON c.device_id = d.id
      WHERE d.id = ANY(${ids}::int[])
      ORDER BY d.id
      FOR NO KEY UPDATE OF d
    `.execute(trx);
    const open = new Map<number, OpenConnection | null>();
    for (const r of rows) {
      open.set(r.id, r.connection_id === null ? null : { connectionId: r.connection_id, protocol: r.protocol!, remoteAddress: r.remote_address, since: r.connected_at! });
    }
    // A device deleted meanwhile has no row: its changes are dropped.
    const events = presenceEvents(open, changes.filter((c) => open.has(c.deviceId)));

    const closed = [...open].filter(([, o]) => o === null).map(([id]) => id);
    const opened = [...open].filter((e): e is [number, OpenConnection] => e[1] !== null);
    if (closed.length > 0) await sql`DELETE FROM device_connections WHERE device_id = ANY(${closed}::int[])`.execute(trx);
    if (opened.length > 0) {
      await sql`
        INSERT INTO device_connections (device_id, connection_id, protocol, remote_address, connected_at)
        SELECT * FROM unnest(${opened.map(([id]) => id)}::int[], ${opened.map(([, o]) => o.connectionId)}::text[],
          ${opened.map(([, o]) => o.protocol)}::text[], ${opened.map(([, o]) => o.remoteAddress)}::text[],
          ${opened.map(([, o]) => o.since.toISOString())}::timestamptz[])
        ON CONFLICT (device_id) DO UPDATE SET connection_id = excluded.connection_id, protocol = excluded.protocol,
          remote_address = excluded.remote_address, connected_at = excluded.connected_at
      `.execute(trx);
    }
    // The protocol a tracker speaks is what it connected with: the record follows it, and commands
    // are checked against it (a vehicle registered without one can take commands once it connects).
    const spoken = new Map(changes.filter((c) => c.kind === 'online' && open.has(c.deviceId)).map((c) => [c.deviceId, c.protocol]));
    if (spoken.size > 0) {
      await sql`
        UPDATE devices d SET protocol = x.protocol
        FROM unnest(${[...spoken.keys()]}::int[], ${[...spoken.values()]}::text[]) AS x(device_id, protocol)
        WHERE d.id = x.device_id AND d.protocol IS DISTINCT FROM x.protocol
      `.execute(trx);
    }
    // Last: appending holds the log's lock until the commit (see appendEvents).
    return (await appendEvents(trx, events)).length;
  });
}
