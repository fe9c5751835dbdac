import { sql } from 'kysely';
import { checkRoleChange, type Role } from '../domain/access/roles.ts';
import { DomainError } from '../domain/domain-error.ts';
import { recordAudit, type AuditActor } from './audit-log.ts';
import { inTransaction, type Db } from './database.ts';
import type { User } from './schema.ts';
import { isUniqueViolation } from './unique-violation.ts';

/**
 * The users of an account as the users API manages them: listed, changed and removed only within the
 * account, by the rules of domain/access/roles.ts, each change audited in its transaction. Every
 * change of a role and every removal first locks the account's row, so two requests that would each
 * leave the account one owner short run one after the other and the second finds the last owner.
 */

const notFound = () => new DomainError('not_found', 'user not found');

/** The account's users not removed, oldest first. */
export async function accountUsers(db: Db, accountId: number): Promise<User[]> {
  return db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('removed_at', 'is', null).orderBy('id').execute();
}

/** One user of the account (removed ones are gone). */
export async function accountUser(db: Db, accountId: number, id: number): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
}

/** Who is asking, as the rules need them: re-read inside the transaction, after the account is locked. */
async function lockedActor(trx: Db, accountId: number, actorId: number): Promise<{ id: number; role: Role }> {
  await sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`.execute(trx);
  const actor = await accountUser(trx, accountId, actorId);
  if (!actor) throw new DomainError('forbidden', 'the calling user has been removed');
  return { id: actor.id, role: actor.role };
}

async function otherOwners(trx: Db, accountId: number, exceptId: number): Promise<number> {
  const row = await trx
    .selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId).where('role', '=', 'owner').where('removed_at', 'is', null).where('id', '!=', exceptId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function conflictOnEmail<T>(email: string | undefined, work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    if (isUniqueViolation(error)) throw new DomainError('conflict', `a user with email ${email} already exists`);
    throw error;
  });
}

export interface UserInvite {
  email: string;
  name: string | null;
  timezone: string;
  role: Role;
}

/** A new user of the actor's account, with a role no higher than the actor's (an owner only by an owner). */
export async function addAccountUser(db: Db, actor: AuditActor & { userId: number }, invite: UserInvite): Promise<User> {
  return inTransaction(db, async (trx) => {
    checkRoleChange(await lockedActor(trx, actor.accountId, actor.userId), undefined, invite.role);
    const user = await conflictOnEmail(invite.email, () =>
      trx.insertInto('users')
        .values({ account_id: actor.accountId, email: invite.email.toLowerCase(), name: invite.name, timezone: invite.timezone, role: invite.role })
        .returningAll().executeTakeFirstOrThrow(),
    );
    await recordAudit(trx, actor, { action: 'user.created', targetType: 'user', targetId: String(user.id), details: { email: user.email, role: user.role } });
    return user;
  });
}

export interface UserChange {
  name?: string | null;
  email?: string;
  timezone?: string;
  role?: Role;
}

/**
 * Changes a user of the actor's account. A change of role follows checkRoleChange, and the account's
 * last owner is never demoted (409).
 */
export async function changeAccountUser(db: Db, actor: AuditActor & { userId: number }, id: number, change: UserChange): Promise<User> {
  return inTransaction(db, async (trx) => {
    const caller = await lockedActor(trx, actor.accountId, actor.userId);
    const target = await accountUser(trx, actor.accountId, id);
    if (!target) throw notFound();
    if (change.role !== undefined && change.role !== target.role) {
      checkRoleChange(caller, { id: target.id, role: target.role }, change.role);
      if (target.role === 'owner' && (await otherOwners(trx, actor.accountId, target.id)) === 0) {
        throw new DomainError('conflict', 'the account\'s last owner cannot be given another role; make another user an owner first');
      }
    } else if (target.role === 'owner' && caller.role !== 'owner' && target.id !== caller.id) {
      checkRoleChange(caller, { id: target.id, role: target.role }, undefined);
    }
    const values = {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.email !== undefined ? { email: change.email.toLowerCase() } : {}),
      ...(change.timezone !== undefined ? { timezone: change.timezone } : {}),
      ...(change.role !== undefined ? { role: change.role } : {}),
    };
    if (Object.keys(values).length === 0) return target;
    const user = await conflictOnEmail(change.email, () => trx.updateTable('users').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow());
    const details: Record<string, unknown> = { changed: Object.keys(change) };
    if (change.role !== undefined && change.role !== target.role) Object.assign(details, { roleFrom: target.role, roleTo: change.role });
    await recordAudit(trx, actor, { action: 'user.updated', targetType: 'user', targetId: String(id), details });
    return user;
  });
}

/** A user's own name and timezone (their email and role stay as others set them). */
export async function changeOwnProfile(db: Db, actor: AuditActor & { userId: number }, change: { name?: string | null; timezone?: string }): Promise<User> {
  return inTransaction(db, async (trx) => {
    const values = {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.timezone !== undefined ? { timezone: change.timezone } : {}),
    };
    const query = trx.updateTable('users').where('id', '=', actor.userId).where('removed_at', 'is', null);
    const user = Object.keys(values).length === 0
      ? await accountUser(trx, actor.accountId, actor.userId)
      : await query.set(values).returningAll().executeTakeFirst();
    if (!user) throw notFound();
    if (Object.keys(values).length > 0) {
      await recordAudit(trx, actor, { action: 'user.updated', targetType: 'user', targetId: String(user.id), details: { changed: Object.keys(values) } });
    }
    return user;
  });
}

/**
 * Removes a user of the actor's account: kept as removed (the audit log and their travels still name
 * them), their API keys, OAuth clients, access tokens and sign-in sessions revoked, their password
 * cleared and their webhooks deleted, in one
 * transaction. Only an owner removes an owner, and never the last one (409).
 */
export async function removeAccountUser(db: Db, actor: AuditActor & { userId: number }, id: number): Promise<User> {
  return inTransaction(db, async (trx) => {
    const caller = await lockedActor(trx, actor.accountId, actor.userId);
    const target = await accountUser(trx, actor.accountId, id);
    if (!target) throw notFound();
    checkRoleChange(caller, { id: target.id, role: target.role }, undefined);
    if (target.role === 'owner' && (await otherOwners(trx, actor.accountId, target.id)) === 0) {
      throw new DomainError('conflict', 'the account\'s last owner cannot be removed; make another user an owner first');
    }
    const removed = await trx.updateTable('users').set({ removed_at: sql`now()` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    const keys = await trx.updateTable('api_keys').set({ revoked_at: sql`now()` }).where('user_id', '=', id).where('revoked_at', 'is', null).returning('id').execute();
    const clients = await trx.updateTable('oauth_clients').set({ revoked_at: sql`now()` }).where('user_id', '=', id).where('revoked_at', 'is', null).returning('id').execute();
    await trx.updateTable('oauth_tokens').set({ revoked_at: sql`now()` })
      .where('client_id', 'in', trx.selectFrom('oauth_clients').select('id').where('user_id', '=', id))
      .where('revoked_at', 'is', null).execute();
    const webhooks = await trx.deleteFrom('webhooks').where('user_id', '=', id).returning('id').execute();
    await trx.updateTable('user_sessions').set({ revoked_at: sql`now()` }).where('user_id', '=', id).where('revoked_at', 'is', null).execute();
    await trx.updateTable('users').set({ password_hash: null }).where('id', '=', id).execute();
    await recordAudit(trx, actor, {
      action: 'user.removed', targetType: 'user', targetId: String(id),
      details: { email: target.email, role: target.role, apiKeysRevoked: keys.length, oauthClientsRevoked: clients.length, webhooksDeleted: webhooks.length },
    });
    return removed;
  });
}

/**
 * Runs `issue` (which stores a one-time link to set the user's password) for a user of the actor's
 * account, in one transaction with its audit entry `user.sign_in_link_issued`. The link lets whoever
 * holds it sign in as the user, so it follows the rule for changing a user: only an owner issues one
 * for an owner. A user of another account is not found, as one that does not exist.
 */
export async function issueForAccountUser<T extends { expiresAt: Date }>(
  db: Db, actor: AuditActor & { userId: number }, id: number, issue: (trx: Db, user: User) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const caller = await lockedActor(trx, actor.accountId, actor.userId);
    const target = await accountUser(trx, actor.accountId, id);
    if (!target) throw notFound();
    if (target.id !== caller.id) checkRoleChange(caller, { id: target.id, role: target.role }, undefined);
    const issued = await issue(trx, target);
    await recordAudit(trx, actor, {
      action: 'user.sign_in_link_issued', targetType: 'user', targetId: String(id), details: { email: target.email, expiresAt: issued.expiresAt.toISOString() },
    });
    return issued;
  });
}

/**
 * The operator's change of a user's role (`fleet user set`): the operator stands above the roles, so
 * only the last-owner rule applies. Audited as the CLI's.
 */
export async function setUserRoleAsOperator(db: Db, id: number, role: Role): Promise<User> {
  return inTransaction(db, async (trx) => {
    const found = await trx.selectFrom('users').select('account_id').where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
    if (!found) throw new DomainError('not_found', `user ${id} does not exist`);
    await sql`SELECT id FROM accounts WHERE id = ${found.account_id} FOR UPDATE`.execute(trx);
    const target = await accountUser(trx, found.account_id, id);
    if (!target) throw notFound();
    if (target.role === role) return target;
    if (target.role === 'owner' && (await otherOwners(trx, target.account_id, id)) === 0) {
      throw new DomainError('conflict', `user ${id} is account ${target.account_id}'s last owner; make another user an owner first`);
    }
    const user = await trx.updateTable('users').set({ role }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    const actor: AuditActor = { kind: 'cli', accountId: target.account_id, mode: 'live', userId: null, remoteAddress: null };
    await recordAudit(trx, actor, { action: 'user.updated', targetType: 'user', targetId: String(id), details: { changed: ['role'], roleFrom: target.role, roleTo: role } });
    return user;
  });
}
