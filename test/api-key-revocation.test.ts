import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertApiKey, revokeApiKey } from '../db/api-keys.ts';
import { DomainError } from '../db/domain-error.ts';
import { fixtures } from './support/fixtures.ts';
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
    expect((refusal as Error).message).toMatch(new RegExp(`^prefix "fc_live_Dup123" matches 2 active keys, so none was revoked; revoke one by id: ${a.id} \\(user ${email}, "ci", created .+\\); ${b.id} \\(user ${email}, created .+\\)$`));
    expect(await active([a.id, b.id])).toEqual([a.id, b.id]);

    // By id, exactly one; then the prefix names the one left.
    expect((await revokeApiKey(database.db, String(a.id))).id).toBe(a.id);
    expect((await revokeApiKey(database.db, 'fc_live_Dup123')).id).toBe(b.id);
    expect(await active([a.id, b.id])).toEqual([]);
  });

  it('says a key is already revoked rather than that nothing matches; an unknown reference is not found', async () => {
    const key = await keyWithPrefix('fc_live_Once12');
    await revokeApiKey(database.db, String(key.id));
    await expect(revokeApiKey(database.db, String(key.id))).rejects.toThrow(new RegExp(`^API key ${key.id} \\(fc_live_Once12…\\) is already revoked, since `));
    await expect(revokeApiKey(database.db, 'fc_live_Nobody')).rejects.toThrow('no API key matches "fc_live_Nobody"');
  });
});
