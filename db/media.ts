import { sql, type RawBuilder } from 'kysely';
import { commandEvent, lastPosition, mediaEvent, type NewEvent } from '../domain/events/event-payloads.ts';
import type { AccessScope } from './access-scope.ts';
import { acknowledgeCommandUnlogged } from './commands.ts';
import { inTransaction, type Db } from './database.ts';
import { appendEvents } from './event-log.ts';

/**
 * Photos trackers send, kept as bytea beside their `vehicle.media` event (docs/api/media.md): a row
 * and its event commit together, any API process serves the bytes, and they are backed up and
 * retained with everything else. Reads go through the device, whose account and mode they are.
 */

/** A photo as ingest hands it over: already checked (size, type from the bytes). */
export interface NewMedia {
  deviceId: number;
  /** The tracker's time for the picture, when its protocol carries one; else when it arrived. */
  takenAt: Date | null;
  contentType: string;
  fileName: string;
  sha256: string;
  protocol: string;
  /** The take_photo command the picture completes, if one awaited it. */
  commandId: string | null;
  bytes: Uint8Array;
}

/** A stored photo's metadata (never its bytes). */
export interface MediaRow {
  id: string;
  device_id: number;
  imei: string;
  taken_at: Date;
  received_at: Date;
  content_type: string;
  size: number;
  file_name: string;
  sha256: string;
  protocol: string;
  command_id: string | null;
}

const COLUMNS = sql`m.id::text AS id, m.device_id, d.imei, m.taken_at, m.received_at, m.content_type, m.size, m.file_name, m.sha256, m.protocol,
  m.command_id::text AS command_id`;

/**
 * Stores a photo with its event, and acknowledges the take_photo command it completes with
 * `media <id>`, in one transaction. The same picture sent again by the same device (same SHA-256)
 * is the row already stored: nothing new is written and no second event is logged.
 */
export async function storeMedia(db: Db, m: NewMedia): Promise<{ media: MediaRow; created: boolean; acknowledged: boolean }> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<{ id: string }>`
      INSERT INTO media (device_id, taken_at, content_type, size, file_name, sha256, protocol, command_id, bytes)
      VALUES (${m.deviceId}, coalesce(${m.takenAt?.toISOString() ?? null}::timestamptz, now()), ${m.contentType}, ${m.bytes.length}, ${m.fileName},
        ${m.sha256}, ${m.protocol}, ${m.commandId}::bigint, ${Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.length)})
      ON CONFLICT (device_id, sha256) DO NOTHING
      RETURNING id::text AS id
    `.execute(trx);
    const created = rows.length > 0;
    const { rows: found } = await sql<MediaRow>`
      SELECT ${COLUMNS} FROM media m JOIN devices d ON d.id = m.device_id WHERE m.device_id = ${m.deviceId} AND m.sha256 = ${m.sha256}
    `.execute(trx);
    const media = found[0]!;
    const command = m.commandId === null ? undefined : await acknowledgeCommandUnlogged(trx, m.commandId, `media ${media.id}`);
    const events: NewEvent[] = [];
    if (created) {
      const { rows: state } = await sql<{ latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null; fix_time: Date | null }>`
        SELECT latitude, longitude, speed_kmh, heading, fix_time FROM device_states WHERE device_id = ${m.deviceId}
      `.execute(trx);
      events.push(mediaEvent(
        { id: media.id, deviceId: m.deviceId, contentType: media.content_type, size: media.size, fileName: media.file_name, commandId: media.command_id, receivedAt: media.received_at },
        state[0] ? lastPosition(state[0]) : null,
      ));
    }
    // The picture, then the command it completes; both last in the transaction (see appendEvents).
    if (command) events.push(commandEvent('acknowledged', command));
    await appendEvents(trx, events);
    return { media, created, acknowledged: command !== undefined };
  });
}

/** Media of the devices a key may see, in its mode: the same rule as the devices themselves. */
function visibleTo(scope: AccessScope): RawBuilder<unknown> {
  return sql`d.account_id = ${scope.accountId} AND d.mode = ${scope.mode}
    AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.user_id = ${scope.userId} AND ud.device_id = d.id)`;
}

export interface MediaPageQuery {
  deviceId: number;
  /** taken_at within [from, to]; absent, every picture. */
  range?: { from: Date; to: Date };
  /** The last id of the previous page: this page continues strictly before it (newest first). */
  beforeId?: string;
  limit: number;
}

/** A page of one device's media, newest first, `limit + 1` rows so the caller can tell whether more follow. */
export async function mediaPage(db: Db, scope: AccessScope, page: MediaPageQuery): Promise<MediaRow[]> {
  const { rows } = await sql<MediaRow>`
    SELECT ${COLUMNS} FROM media m JOIN devices d ON d.id = m.device_id
    WHERE m.device_id = ${page.deviceId} AND ${visibleTo(scope)}
      ${page.range === undefined ? sql`` : sql`AND m.taken_at >= ${page.range.from.toISOString()}::timestamptz AND m.taken_at <= ${page.range.to.toISOString()}::timestamptz`}
      ${page.beforeId === undefined ? sql`` : sql`AND m.id < ${page.beforeId}::bigint`}
    ORDER BY m.id DESC
    LIMIT ${page.limit + 1}
  `.execute(db);
  return rows;
}

/** One stored photo with its bytes, if the key may see its device. */
export async function visibleMediaFile(db: Db, scope: AccessScope, id: string): Promise<(MediaRow & { bytes: Buffer }) | undefined> {
  const { rows } = await sql<MediaRow & { bytes: Buffer }>`
    SELECT ${COLUMNS}, m.bytes FROM media m JOIN devices d ON d.id = m.device_id WHERE m.id = ${id}::bigint AND ${visibleTo(scope)}
  `.execute(db);
  return rows[0];
}

/** Deletes up to `limit` photos received before `before`, oldest first; returns how many went. */
export async function pruneMedia(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM media WHERE id IN (
      SELECT id FROM media WHERE received_at < ${before.toISOString()}::timestamptz ORDER BY received_at LIMIT ${limit}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
