import type { AuditActor } from '../db/audit-log.ts';
import type { Db } from '../db/database.ts';
import type { DeviceMode } from '../db/schema.ts';

/** The operator acting with `fleet` for a user's account, as the audit log records it: actor `cli`, no key, no address. */
export async function cliActor(db: Db, userId: number, mode: DeviceMode): Promise<AuditActor> {
  const user = await db.selectFrom('users').select(['id', 'account_id']).where('id', '=', userId).executeTakeFirstOrThrow();
  return { kind: 'cli', accountId: user.account_id, mode, userId: user.id, remoteAddress: null };
}
