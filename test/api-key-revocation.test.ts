import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertApiKey, revokeApiKey } from '../db/api-keys.ts';
import { DomainError } from '../domain/domain-error.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
let userId: number;
let email: string;
beforeAll(async () => {
  database = await openTestDatabase();
  const make = fixtures(database.db);
  const user = await make.user((await make.account()).id);
  userId = user.id;
  email = user.email;
});
afterAll(async () => {
  await database?.destroy();
});

let sequence = 0;
/** A key with a chosen clear prefix: prefixes are the first characters of a key and may repeat. */
const keyWithPrefix = (prefix: string, name: string | null = null) =>
  insertApiKey(database.db, { userId, prefix, keyHash: `hash-${process.pid}-${++sequence}`, mode: 'live', permissions: ['*'], name });

const active = async (ids: number[]) =>
  (await database.db.selectFrom('api_keys').select('id').where('id', 'in', ids).where('revoked_at', 'is', null).orderBy('id').execute()).map((k) => k.id);

describe('revokeApiKey', () => {
  it('refuses a prefix several active keys share, revoking none and naming each by id', async () => {
    const [a, b] = [await keyWithPrefix('fc_live_Dup123', 'ci'), await keyWithPrefix('fc_live_Dup123')];
    const refusal = await revokeApiKey(database.db, 'fc_live_Dup123').catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(DomainError);
    expect((refusal as Error).message).toMatch(new RegExp(`^prefix "fc_live_Dup123" matches 2 keys, so none was revoked; revoke one by id: ${a.id} \\(user ${email}, "ci", created .+\\); ${b.id} \\(user ${email}, created .+\\)$`));
    expect(await active([a.id, b.id])).toEqual([a.id, b.id]);

    // By id, exactly one.
    expect((await revokeApiKey(database.db, String(a.id))).key.id).toBe(a.id);
    expect(await active([a.id, b.id])).toEqual([b.id]);
  });

  it('revokes the one key a unique prefix names', async () => {
    const [mine, other] = [await keyWithPrefix('fc_live_Solo12'), await keyWithPrefix('fc_live_Solo34')];
    expect((await revokeApiKey(database.db, 'fc_live_Solo12')).key.id).toBe(mine.id);
    expect(await active([mine.id, other.id])).toEqual([other.id]);
  });

  it('refuses a prefix an active key shares with a revoked one: the operator may have meant the revoked key', async () => {
    const [gone, live] = [await keyWithPrefix('fc_live_Half12'), await keyWithPrefix('fc_live_Half12')];
    await revokeApiKey(database.db, String(gone.id));
    await expect(revokeApiKey(database.db, 'fc_live_Half12')).rejects.toThrow(
      new RegExp(`^prefix "fc_live_Half12" matches 2 keys, so none was revoked; revoke one by id: ${gone.id} \\(user ${email}, created .+, revoked .+\\); ${live.id} \\(user ${email}, created [^,]+\\)$`),
    );
    expect(await active([gone.id, live.id])).toEqual([live.id]);
  });

  it('says when every key sharing a prefix is already revoked', async () => {
    const [a, b] = [await keyWithPrefix('fc_live_Both12'), await keyWithPrefix('fc_live_Both12')];
    await revokeApiKey(database.db, String(a.id));
    await revokeApiKey(database.db, String(b.id));
    await expect(revokeApiKey(database.db, 'fc_live_Both12')).rejects.toThrow(
      new RegExp(`^the 2 API keys with prefix "fc_live_Both12" are already revoked: ${a.id} \\(since .+\\); ${b.id} \\(since .+\\)$`),
    );
  });

  it('revokes what the key minted through the API, as the operator\'s `fleet key revoke` does, and says how many', async () => {
    const root = await keyWithPrefix('fc_live_Root12');
    const child = await insertApiKey(database.db, { userId, prefix: 'fc_live_Kid123', keyHash: `hash-${process.pid}-${++sequence}`, mode: 'live', permissions: ['*'], parent: { apiKeyId: root.id } });
    const grandchild = await insertApiKey(database.db, { userId, prefix: 'fc_live_Kid456', keyHash: `hash-${process.pid}-${++sequence}`, mode: 'live', permissions: ['*'], parent: { apiKeyId: child.id } });
    const unrelated = await keyWithPrefix('fc_live_Else12');
    const { key, minted } = await revokeApiKey(database.db, String(root.id));
    expect(key.id).toBe(root.id);
    expect(minted.map((m) => [m.kind, m.id, m.parent])).toEqual([['api_key', child.id, { apiKeyId: root.id }], ['api_key', grandchild.id, { apiKeyId: child.id }]]);
    expect(await active([root.id, child.id, grandchild.id, unrelated.id])).toEqual([unrelated.id]);
  });

  it('answers an id beyond any key id as not found, not as a database error', async () => {
    await expect(revokeApiKey(database.db, '99999999999')).rejects.toThrow(new DomainError('not_found', 'no API key matches "99999999999"'));
  });

  it('says a key is already revoked rather than that nothing matches; an unknown reference is not found', async () => {
    const key = await keyWithPrefix('fc_live_Once12');
    await revokeApiKey(database.db, String(key.id));
    await expect(revokeApiKey(database.db, String(key.id))).rejects.toThrow(new RegExp(`^API key ${key.id} \\(fc_live_Once12…\\) is already revoked, since `));
    await expect(revokeApiKey(database.db, 'fc_live_Nobody')).rejects.toThrow('no API key matches "fc_live_Nobody"');
  });
});
