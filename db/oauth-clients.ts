import type { Db } from './database.ts';
import { parentColumns, type MintingCredential } from './minted-credentials.ts';
import type { DeviceMode } from './schema.ts';

export interface NewOauthClient {
  clientId: string;
  secretHash: string;
  userId: number;
  mode: DeviceMode;
  name: string | null;
  scopes: string[];
  expiresAt: Date | null;
  /** The credential minting it through the API; absent when the operator makes it. */
  parent?: MintingCredential;
}

const RECORD = [
  'c.id', 'c.client_id', 'c.user_id', 'c.mode', 'c.name', 'c.scopes', 'c.expires_at', 'c.revoked_at', 'c.last_used_at', 'c.created_at',
  'c.parent_api_key_id', 'c.parent_oauth_client_id',
] as const;

export async function insertOauthClient(db: Db, client: NewOauthClient) {
  return db
    .insertInto('oauth_clients')
    .values({
      client_id: client.clientId, secret_hash: client.secretHash, user_id: client.userId, mode: client.mode,
      name: client.name, scopes: client.scopes, expires_at: client.expiresAt, ...parentColumns(client.parent),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A client by its public id, with its secret's hash and its user's account and timezone: what the token endpoint checks. */
export async function findOauthClient(db: Db, clientId: string) {
  return db
    .selectFrom('oauth_clients as c')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select([...RECORD, 'c.secret_hash', 'u.account_id', 'u.timezone'])
    .where('c.client_id', '=', clientId)
    .executeTakeFirst();
}

export type OauthClientRow = NonNullable<Awaited<ReturnType<typeof findOauthClient>>>;
