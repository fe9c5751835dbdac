import { sql } from 'kysely';
import type { CommandType } from '../ingest/commands/command-catalog.ts';
import type { Db } from './database.ts';
import type { CommandStatus } from './schema.ts';

export interface CommandRow {
  id: string;
  account_id: number;
  device_id: number;
  api_key_id: number | null;
  user_id: number | null;
  type: CommandType;
  params: Record<string, unknown>;
  text: string | null;
  status: CommandStatus;
  status_reason: string | null;
  attempts: number;
  idempotency_key: string | null;
  response: string | null;
  created_at: Date;
  sent_at: Date | null;
  acknowledged_at: Date | null;
  finished_at: Date | null;
  expires_at: Date;
}

export interface NewCommand {
  accountId: number;
  deviceId: number;
  apiKeyId: number | null;
  userId: number | null;
  type: CommandType;
  params: Record<string, unknown>;
  text: string | null;
  idempotencyKey: string | null;
  expiresAt: Date;
}

const COLUMNS = sql`id::text, account_id, device_id, api_key_id, user_id, type, params, text, status, status_reason, attempts, idempotency_key,
  response, created_at, sent_at, acknowledged_at, finished_at, expires_at`;

/**
 * Records a command as queued. A repeated idempotency key of the same API key finds the first
 * command instead (`created: false`), whatever the rest of the request says.
 */
export async function queueCommand(db: Db, c: NewCommand): Promise<{ command: CommandRow; created: boolean }> {
  const { rows } = await sql<CommandRow>`
    INSERT INTO commands (account_id, device_id, api_key_id, user_id, type, params, text, idempotency_key, expires_at)
    VALUES (${c.accountId}, ${c.deviceId}, ${c.apiKeyId}, ${c.userId}, ${c.type}, ${JSON.stringify(c.params)}::jsonb, ${c.text}, ${c.idempotencyKey}, ${c.expiresAt})
    ON CONFLICT (api_key_id, idempotency_key) DO NOTHING
    RETURNING ${COLUMNS}
  `.execute(db);
  if (rows[0]) return { command: rows[0], created: true };
  const { rows: first } = await sql<CommandRow>`
    SELECT ${COLUMNS} FROM commands WHERE api_key_id = ${c.apiKeyId} AND idempotency_key = ${c.idempotencyKey}
  `.execute(db);
  return { command: first[0]!, created: false };
}

/**
 * The command a device should be given now: its oldest open one, one at a time. A command already
 * sent on an earlier connection that never answered is given again (the device may not have received
 * it); one sent on this connection is awaited, so nothing else is returned meanwhile.
 */
export async function nextCommandFor(db: Db, deviceId: number, connectedAt: Date): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    SELECT ${COLUMNS} FROM commands
    WHERE device_id = ${deviceId} AND status IN ('queued', 'sent') AND expires_at > now()
    ORDER BY id LIMIT 1
  `.execute(db);
  const next = rows[0];
  if (!next) return undefined;
  if (next.status === 'sent' && next.sent_at && next.sent_at >= connectedAt) return undefined;
  return next;
}

/** Bytes written to the device's connection: `sent`, one attempt more. Undefined if it left the open states meanwhile (cancelled, expired). */
export async function markCommandSent(db: Db, id: string): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status = 'sent', sent_at = now(), attempts = attempts + 1, status_reason = NULL
    WHERE id = ${id} AND status IN ('queued', 'sent') AND expires_at > now()
    RETURNING ${COLUMNS}
  `.execute(db);
  return rows[0];
}

/** The device answered: its oldest sent command is acknowledged with the answer's text. */
export async function acknowledgeOldestSent(db: Db, deviceId: number, response: string): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status = 'acknowledged', response = ${response}, acknowledged_at = now(), finished_at = now()
    WHERE id = (SELECT id FROM commands WHERE device_id = ${deviceId} AND status = 'sent' ORDER BY id LIMIT 1 FOR UPDATE)
    RETURNING ${COLUMNS}
  `.execute(db);
  return rows[0];
}

/** An open command ends in failure (the device refused it, or too many attempts went unanswered). */
export async function failCommand(db: Db, id: string, reason: string): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status = 'failed', status_reason = ${reason}, finished_at = now()
    WHERE id = ${id} AND status IN ('queued', 'sent')
    RETURNING ${COLUMNS}
  `.execute(db);
  return rows[0];
}

/** Open commands whose time to live has passed become `expired`; returns them. */
export async function expireCommands(db: Db, limit = 1000): Promise<CommandRow[]> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status = 'expired', finished_at = now()
    WHERE id IN (
      SELECT id FROM commands WHERE status IN ('queued', 'sent') AND expires_at <= now()
      ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING ${COLUMNS}
  `.execute(db);
  return rows;
}

/** Cancels a command of the account that was not sent yet; undefined when there is none such. */
export async function cancelQueuedCommand(db: Db, accountId: number, id: string): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status = 'cancelled', finished_at = now()
    WHERE id = ${id} AND account_id = ${accountId} AND status = 'queued'
    RETURNING ${COLUMNS}
  `.execute(db);
  return rows[0];
}
