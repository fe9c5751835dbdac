import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { Role } from '../domain/access/roles.ts';

export interface SessionLifetimes {
  /** A session unused this long ends (SESSION_IDLE_MINUTES). */
  idleMs: number;
  /** A session ends this long after sign-in, used or not (SESSION_MAX_DAYS). */
  maxMs: number;
}

export interface NewSession {
  tokenHash: string;
  userId: number;
  userAgent: string | null;
  address: string | null;
}

export interface SessionRow {
  id: string;
  user_id: number;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  idle_expires_at: Date;
  user_agent: string | null;
  address: string | null;
}

/** A session with its user, as the cookie's check needs them. */
export interface ActiveSession extends SessionRow {
  account_id: number;
  email: string;
  name: string | null;
  timezone: string;
  role: Role;
}

const SESSION_COLUMNS = ['id', 'user_id', 'created_at', 'last_seen_at', 'expires_at', 'idle_expires_at', 'user_agent', 'address'] as const;

export async function insertSession(db: Db, session: NewSession, lifetimes: SessionLifetimes): Promise<SessionRow> {
  const now = Date.now();
  // Ended sessions of this user are swept on the way, so the table holds what is in force.
  await sql`DELETE FROM user_sessions WHERE user_id = ${session.userId} AND (revoked_at IS NOT NULL OR expires_at < now() OR idle_expires_at < now())`.execute(db);
  return db
    .insertInto('user_sessions')
    .values({
      id: randomUUID(),
      token_hash: session.tokenHash,
      user_id: session.userId,
      expires_at: new Date(now + lifetimes.maxMs),
      idle_expires_at: new Date(now + Math.min(lifetimes.idleMs, lifetimes.maxMs)),
      user_agent: session.userAgent?.slice(0, 512) ?? null,
      address: session.address,
    })
    .returning(SESSION_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * The session in force whose token has this hash, with its user; undefined when there is none (never
 * made, signed out, revoked, expired or idle too long). The user's role is read with it, so a changed role holds at once.
 */
export async function findActiveSession(db: Db, tokenHash: string): Promise<ActiveSession | undefined> {
  const row = await db
    .selectFrom('user_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(SESSION_COLUMNS.map((column) => `s.${column}` as const))
    .select(['u.account_id', 'u.email', 'u.name', 'u.timezone'])
    .select('u.role')
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', new Date())
    .where('s.idle_expires_at', '>', new Date())
    .executeTakeFirst();
  return row as ActiveSession | undefined;
}

/** Records a use: last seen now, idle expiry pushed forward (never past the absolute expiry). */
export async function touchSession(db: Db, id: string, idleMs: number): Promise<void> {
  const now = new Date();
  await db
    .updateTable('user_sessions')
    .set({ last_seen_at: now, idle_expires_at: sql`least(expires_at, ${new Date(now.getTime() + idleMs)}::timestamptz)` })
    .where('id', '=', id)
    .execute();
}

/** The user's sessions in force, newest first. */
export async function sessionsOfUser(db: Db, userId: number): Promise<SessionRow[]> {
  return db
    .selectFrom('user_sessions')
    .select(SESSION_COLUMNS)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .where('idle_expires_at', '>', new Date())
    .orderBy('created_at', 'desc')
    .execute();
}

/** Ends one of the user's sessions; false when the user has no such session in force. */
export async function revokeSession(db: Db, userId: number, id: string): Promise<boolean> {
  const result = await db
    .updateTable('user_sessions')
    .set({ revoked_at: new Date() })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Ends every session of the user but `exceptId` (none: all of them); returns how many ended. */
export async function revokeSessionsOfUser(db: Db, userId: number, exceptId?: string): Promise<number> {
  let query = db.updateTable('user_sessions').set({ revoked_at: new Date() }).where('user_id', '=', userId).where('revoked_at', 'is', null);
  if (exceptId) query = query.where('id', '!=', exceptId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Which of these sessions are still in force (open event streams ask this every second or so). */
export async function sessionIdsInForce(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('user_sessions')
    .select('id')
    .where('id', 'in', ids)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', new Date())
    .where('idle_expires_at', '>', new Date())
    .execute();
  return new Set(rows.map((r) => r.id));
}
