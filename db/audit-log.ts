import { sql } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { AuditActorKind, DeviceMode } from './schema.ts';

/** Who did something the audit log keeps: a key, an OAuth client (through its token), or the operator's CLI. */
export interface AuditActor {
  kind: AuditActorKind;
  accountId: number;
  mode: DeviceMode;
  userId: number | null;
  apiKeyId?: number | null;
  oauthClientId?: number | null;
  /** The client's address; null from the CLI. */
  remoteAddress: string | null;
}

export interface AuditEntry {
  /** `<target type>.<verb>`: `api_key.created`, `webhook.updated`, `command.cancelled`... */
  action: string;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

/** Appends an entry; inside the caller's transaction when it passes one, so the change and its record commit together. */
export async function recordAudit(db: Db, actor: AuditActor, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      account_id: actor.accountId, mode: actor.mode, actor_kind: actor.kind, api_key_id: actor.apiKeyId ?? null,
      oauth_client_id: actor.oauthClientId ?? null, user_id: actor.userId, action: entry.action, target_type: entry.targetType,
      target_id: entry.targetId, details: JSON.stringify(entry.details ?? {}), remote_address: actor.remoteAddress,
    })
    .execute();
}

export interface AuditPageQuery {
  /** Exact actions, or families by a trailing `.*` (`api_key.*`). */
  actions?: string[];
  beforeId?: string;
  from?: Date;
  to?: Date;
  limit: number;
}

/** A page of the account's entries of the scope's mode, newest first, `limit + 1` rows. */
export async function auditPage(db: Db, scope: AccessScope, page: AuditPageQuery) {
  const actions = page.actions ?? [];
  const exact = actions.filter((a) => !a.endsWith('.*'));
  const families = actions.filter((a) => a.endsWith('.*')).map((a) => `${a.slice(0, -1)}%`);
  return db
    .selectFrom('audit_log as a')
    .leftJoin('api_keys as k', 'k.id', 'a.api_key_id')
    .leftJoin('oauth_clients as c', 'c.id', 'a.oauth_client_id')
    .select([
      sql<string>`a.id::text`.as('id'), 'a.actor_kind', 'a.api_key_id', 'k.prefix as key_prefix', 'a.oauth_client_id', 'c.client_id as public_client_id',
      'a.user_id', 'a.action', 'a.target_type', 'a.target_id', 'a.details', 'a.remote_address', 'a.occurred_at',
    ])
    .where('a.account_id', '=', scope.accountId)
    .where('a.mode', '=', scope.mode)
    .$if(actions.length > 0, (q) =>
      q.where(sql<boolean>`(a.action = ANY(${exact}::text[]) OR a.action LIKE ANY(${families}::text[]))`),
    )
    .$if(page.beforeId !== undefined, (q) => q.where(sql<boolean>`a.id < ${page.beforeId}::bigint`))
    .$if(page.from !== undefined, (q) => q.where('a.occurred_at', '>=', page.from!))
    .$if(page.to !== undefined, (q) => q.where('a.occurred_at', '<=', page.to!))
    .orderBy(sql`a.id`, 'desc')
    .limit(page.limit + 1)
    .execute();
}

export type AuditRow = Awaited<ReturnType<typeof auditPage>>[number];
