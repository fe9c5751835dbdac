import { recordAudit, type AuditEntry } from '../db/audit-log.ts';
import type { Db } from '../db/database.ts';
import type { DeviceMode } from '../db/schema.ts';

/** Records what an operator did with `fleet` for a user's account: actor `cli`, no key, no address. */
export async function recordCliAudit(db: Db, userId: number, mode: DeviceMode, entry: AuditEntry): Promise<void> {
  const user = await db.selectFrom('users').select(['id', 'account_id']).where('id', '=', userId).executeTakeFirstOrThrow();
  await recordAudit(db, { kind: 'cli', accountId: user.account_id, mode, userId: user.id, remoteAddress: null }, entry);
}
