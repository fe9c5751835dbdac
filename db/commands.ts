import { sql, type RawBuilder } from 'kysely';
import type { CommandType } from '../domain/commands/command-catalog.ts';
import { commandEvent, type NewEvent } from '../domain/events/event-payloads.ts';
import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';
import { appendEvents } from './event-log.ts';
import type { CommandStatus } from './schema.ts';

/**
 * Remote commands: a row first, then bytes on the device's connection. The row is the state machine
 * (queued → sent → acknowledged | failed | expired | cancelled) and the audit trail (the key, user and
 * address that issued it), so nothing queued is lost when a process dies. Every change of state is
 * logged as an event in the same transaction, so the log, the stream and webhooks tell each one once.
 */

export interface CommandRow {
  id: string;
  account_id: number;
  device_id: number;
  api_key_id: number | null;
  /** The OAuth client whose token sent it, when no API key did. */
  oauth_client_id: number | null;
  user_id: number | null;
  type: CommandType;
  params: Record<string, unknown>;
  text: string | null;
  status: CommandStatus;
  /** Why an open command waits before its next send (the safety rule), or why it failed. */
  status_reason: string | null;
  attempts: number;
  max_attempts: number;
  idempotency_key: string | null;
  requested_from: string | null;
  response: string | null;
  created_at: Date;
  sent_at: Date | null;
  acknowledged_at: Date | null;
  finished_at: Date | null;
  expires_at: Date;
}

export const OPEN_STATUSES: readonly CommandStatus[] = ['queued', 'sent'];

export interface NewCommand {
  accountId: number;
  deviceId: number;
  apiKeyId: number | null;
  /** The OAuth client behind the request, when a token (not a key) sent it; its tokens share idempotency keys. */
  oauthClientId?: number | null;
  userId: number | null;
  type: CommandType;
  params: Record<string, unknown>;
  text: string | null;
  idempotencyKey: string | null;
  expiresAt: Date;
  /** Sends before the command fails unanswered (default 3). */
  maxAttempts?: number;
  /** The client's address, for the audit trail. */
  requestedFrom?: string | null;
  /** Why it must wait before it may be sent (the safety rule); null: it may go at once. */
  holdReason?: string | null;
}

const COLUMNS = sql`id::text, account_id, device_id, api_key_id, oauth_client_id, user_id, type, params, text, status, status_reason, attempts, max_attempts,
  idempotency_key, requested_from, response, created_at, sent_at, acknowledged_at, finished_at, expires_at`;

/** One state change: the update, then its events, in one transaction (events last, see appendEvents). */
async function transition(db: Db, update: RawBuilder<CommandRow>, event: (c: CommandRow) => NewEvent): Promise<CommandRow[]> {
  return inTransaction(db, async (trx) => {
    const { rows } = await update.execute(trx);
    await appendEvents(trx, rows.map(event));
    return rows;
  });
}

/**
 * Records a command as queued. A repeated idempotency key of the same API key (or of the same OAuth
 * client, whichever token it used) finds the first command instead (`created: false`); the caller
 * decides whether the repeat asked for the same thing.
 */
export async function queueCommand(db: Db, c: NewCommand): Promise<{ command: CommandRow; created: boolean }> {
  const oauthClientId = c.oauthClientId ?? null;
  const { rows } = await sql<CommandRow>`
    INSERT INTO commands (account_id, device_id, api_key_id, oauth_client_id, user_id, type, params, text, idempotency_key, expires_at, max_attempts,
      requested_from, status_reason)
    VALUES (${c.accountId}, ${c.deviceId}, ${c.apiKeyId}, ${oauthClientId}, ${c.userId}, ${c.type}, ${JSON.stringify(c.params)}::jsonb, ${c.text},
      ${c.idempotencyKey}, ${c.expiresAt}, ${c.maxAttempts ?? 3}, ${c.requestedFrom ?? null}, ${c.holdReason ?? null})
    ON CONFLICT DO NOTHING
    RETURNING ${COLUMNS}
  `.execute(db);
  if (rows[0]) return { command: rows[0], created: true };
  const owner = oauthClientId === null ? sql`api_key_id = ${c.apiKeyId}` : sql`oauth_client_id = ${oauthClientId}`;
  const { rows: first } = await sql<CommandRow>`
    SELECT ${COLUMNS} FROM commands WHERE ${owner} AND idempotency_key = ${c.idempotencyKey}
  `.execute(db);
  return { command: first[0]!, created: false };
}

/**
 * The command a device should be given now: its oldest open one that has not expired, queued or
 * already sent (a sent one awaits its answer, or is sent again on a new connection). Commands go one
 * at a time, so a device's later commands wait behind it.
 */
export async function nextCommandFor(db: Db, deviceId: number): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    SELECT ${COLUMNS} FROM commands
    WHERE device_id = ${deviceId} AND status IN ('queued', 'sent') AND expires_at > now()
    ORDER BY id LIMIT 1
  `.execute(db);
  return rows[0];
}

/** Of these devices, those with an open command that has not expired: what a connection holder should look at. */
export async function devicesWithOpenCommands(db: Db, deviceIds: readonly number[]): Promise<number[]> {
  if (deviceIds.length === 0) return [];
  const { rows } = await sql<{ device_id: number }>`
    SELECT DISTINCT device_id FROM commands
    WHERE device_id = ANY(${deviceIds}::int[]) AND status IN ('queued', 'sent') AND expires_at > now()
  `.execute(db);
  return rows.map((r) => r.device_id);
}

/**
 * Bytes are about to be written to the device's connection: `sent`, one attempt more, any hold
 * reason cleared. Undefined if it left the open states meanwhile (cancelled, expired, answered).
 */
export async function markCommandSent(db: Db, id: string): Promise<CommandRow | undefined> {
  const [row] = await transition(
    db,
    sql<CommandRow>`
      UPDATE commands SET status = 'sent', sent_at = now(), attempts = attempts + 1, status_reason = NULL
      WHERE id = ${id} AND status IN ('queued', 'sent') AND expires_at > now()
      RETURNING ${COLUMNS}`,
    (c) => commandEvent('sent', c),
  );
  return row;
}

const acknowledgeSql = (id: string, response: string) => sql<CommandRow>`
  UPDATE commands SET status = 'acknowledged', response = ${response}, acknowledged_at = now(), finished_at = now()
  WHERE id = ${id} AND status = 'sent'
  RETURNING ${COLUMNS}`;

/** The device answered the command: `acknowledged` with the answer's text. Undefined if it was no longer `sent`. */
export async function acknowledgeCommand(db: Db, id: string, response: string): Promise<CommandRow | undefined> {
  const [row] = await transition(db, acknowledgeSql(id, response), (c) => commandEvent('acknowledged', c));
  return row;
}

/**
 * acknowledgeCommand inside the caller's transaction, which logs the returned command's
 * `command.acknowledged` event (commandEvent) with its own events, last (a stored picture: db/media.ts).
 */
export async function acknowledgeCommandUnlogged(trx: Db, id: string, response: string): Promise<CommandRow | undefined> {
  const { rows } = await acknowledgeSql(id, response).execute(trx);
  return rows[0];
}

/**
 * An open command ends in failure: the device refused it (its answer kept as `response`), too many
 * attempts went unanswered, or the connection's protocol cannot express it.
 */
export async function failCommand(db: Db, id: string, reason: string, response: string | null = null): Promise<CommandRow | undefined> {
  const [row] = await transition(
    db,
    sql<CommandRow>`
      UPDATE commands SET status = 'failed', status_reason = ${reason}, response = coalesce(${response}, response), finished_at = now()
      WHERE id = ${id} AND status IN ('queued', 'sent')
      RETURNING ${COLUMNS}`,
    (c) => commandEvent('failed', c),
  );
  return row;
}

/**
 * Why an open command waits before its next send (null: it no longer does): a queued one, or a sent
 * one whose resend on a new connection is held. Undefined if it is not open any more.
 */
export async function holdCommand(db: Db, id: string, reason: string | null): Promise<CommandRow | undefined> {
  const { rows } = await sql<CommandRow>`
    UPDATE commands SET status_reason = ${reason} WHERE id = ${id} AND status IN ('queued', 'sent') RETURNING ${COLUMNS}
  `.execute(db);
  return rows[0];
}

/** Open commands whose time to live has passed become `expired`; returns them. */
export async function expireCommands(db: Db, limit = 1000): Promise<CommandRow[]> {
  return transition(
    db,
    sql<CommandRow>`
      UPDATE commands SET status = 'expired', finished_at = now()
      WHERE id IN (
        SELECT id FROM commands WHERE status IN ('queued', 'sent') AND expires_at <= now()
        ORDER BY expires_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
      )
      RETURNING ${COLUMNS}`,
    (c) => commandEvent('expired', c),
  );
}

/** Cancels a command of the account that was not sent yet; undefined when there is none such. */
export async function cancelQueuedCommand(db: Db, accountId: number, id: string): Promise<CommandRow | undefined> {
  const [row] = await transition(
    db,
    sql<CommandRow>`
      UPDATE commands SET status = 'cancelled', finished_at = now()
      WHERE id = ${id} AND account_id = ${accountId} AND status = 'queued'
      RETURNING ${COLUMNS}`,
    (c) => commandEvent('cancelled', c),
  );
  return row;
}
