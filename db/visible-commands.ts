import { sql, type RawBuilder } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import type { CommandRow } from './commands.ts';
import type { Db } from './database.ts';
import type { CommandStatus } from './schema.ts';

/** A command as the API shows it: the record, its device's IMEI and the key that issued it. */
export interface VisibleCommandRow extends CommandRow {
  imei: string;
  key_prefix: string | null;
  key_name: string | null;
  /** The OAuth client's public id, when a token of it sent the command. */
  public_client_id: string | null;
}

const COLUMNS = sql`c.id::text AS id, c.account_id, c.device_id, c.api_key_id, c.oauth_client_id, c.user_id, c.type, c.params, c.text, c.status, c.status_reason,
  c.attempts, c.max_attempts, c.idempotency_key, c.requested_from, c.response, c.created_at, c.sent_at, c.acknowledged_at, c.finished_at,
  c.expires_at, d.imei, k.prefix AS key_prefix, k.name AS key_name, o.client_id AS public_client_id`;

/** Commands of the devices a key may see, in its mode: the same rule as the devices themselves. */
function visibleTo(scope: AccessScope): RawBuilder<unknown> {
  return sql`c.account_id = ${scope.accountId} AND d.mode = ${scope.mode}
    AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.user_id = ${scope.userId} AND ud.device_id = c.device_id)`;
}

const FROM = sql`commands c JOIN devices d ON d.id = c.device_id LEFT JOIN api_keys k ON k.id = c.api_key_id LEFT JOIN oauth_clients o ON o.id = c.oauth_client_id`;

export async function visibleCommand(db: Db, scope: AccessScope, id: string): Promise<VisibleCommandRow | undefined> {
  const { rows } = await sql<VisibleCommandRow>`SELECT ${COLUMNS} FROM ${FROM} WHERE c.id = ${id}::bigint AND ${visibleTo(scope)}`.execute(db);
  return rows[0];
}

export interface CommandPageQuery {
  /** The device's IMEI. */
  imei?: string;
  statuses?: readonly CommandStatus[];
  /** The last id of the previous page: this page starts strictly before it (newest first). */
  beforeId?: string;
  limit: number;
}

/** A page of visible commands, newest first, `limit + 1` rows so the caller can tell whether more follow. */
export async function commandPage(db: Db, scope: AccessScope, page: CommandPageQuery): Promise<VisibleCommandRow[]> {
  const { rows } = await sql<VisibleCommandRow>`
    SELECT ${COLUMNS} FROM ${FROM}
    WHERE ${visibleTo(scope)}
      ${page.imei === undefined ? sql`` : sql`AND d.imei = ${page.imei}`}
      ${page.statuses === undefined ? sql`` : sql`AND c.status = ANY(${page.statuses}::text[])`}
      ${page.beforeId === undefined ? sql`` : sql`AND c.id < ${page.beforeId}::bigint`}
    ORDER BY c.id DESC
    LIMIT ${page.limit + 1}
  `.execute(db);
  return rows;
}

/** A device a command may be sent to: visible to the key, with its protocol and its newest stored fix (nulls before its first). */
export interface CommandTarget {
  id: number;
  imei: string;
  protocol: string | null;
  last_speed_kmh: number | null;
  last_fix_time: Date | null;
  last_fix_valid: boolean | null;
}

/** The device a key may send a command to, in one query: the same visibility as its commands. */
export async function commandTarget(db: Db, scope: AccessScope, imei: string): Promise<CommandTarget | undefined> {
  const { rows } = await sql<CommandTarget>`
    SELECT d.id, d.imei, d.protocol, s.speed_kmh AS last_speed_kmh, s.fix_time AS last_fix_time, s.valid AS last_fix_valid
    FROM devices d LEFT JOIN device_states s ON s.device_id = d.id
    WHERE d.imei = ${imei} AND d.account_id = ${scope.accountId} AND d.mode = ${scope.mode}
      AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.user_id = ${scope.userId} AND ud.device_id = d.id)
  `.execute(db);
  return rows[0];
}
