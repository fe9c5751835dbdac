import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../simulators/fleet-records.ts';
import { runFleet, type CommandRun } from './support/fleet-command.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Roles as the operator gives them: `fleet user create --role` (owner for an account's first user,
// viewer after), `fleet user list`, `fleet user set --role`, which keeps the account's last owner.
// Real processes against this file's database.

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

const fleet = (args: string[]) => runFleet(args, database.env);
function json(run: CommandRun): any {
  expect(run.code, `exit ${run.code}; stderr: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout);
}

describe('fleet user roles', () => {
  it('makes the first user an owner and later ones viewers unless --role says, lists them, and changes roles but never the last owner\'s', async () => {
    const account = await fixtures(database.db).account();
    const create = (email: string, ...more: string[]) => fleet(['user', 'create', '--account', String(account.id), '--email', email, '--timezone', 'UTC', '--json', ...more]);
    const first = json(await create('first@roles.test'));
    expect(first.role).toBe('owner');
    const second = json(await create('second@roles.test'));
    expect(second.role).toBe('viewer');
    const third = json(await create('third@roles.test', '--role', 'dispatcher'));
    expect(third.role).toBe('dispatcher');
    const bad = await create('fourth@roles.test', '--role', 'king');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--role "king" is not a role; one of owner, admin, dispatcher, viewer/);

    const list = json(await fleet(['user', 'list', '--account', String(account.id), '--json']));
    expect(list.map((u: { email: string; role: string }) => [u.email, u.role])).toEqual([
      ['first@roles.test', 'owner'], ['second@roles.test', 'viewer'], ['third@roles.test', 'dispatcher'],
    ]);

    const lastOwner = await fleet(['user', 'set', '--user', String(first.id), '--role', 'admin']);
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toMatch(/last owner/);
    expect(json(await fleet(['user', 'set', '--user', String(second.id), '--role', 'owner', '--json']))).toMatchObject({ id: second.id, role: 'owner' });
    expect(json(await fleet(['user', 'set', '--user', String(first.id), '--role', 'admin', '--json']))).toMatchObject({ id: first.id, role: 'admin' });
    const audit = await database.db.selectFrom('audit_log').select(['action', 'actor_kind', 'details']).where('account_id', '=', account.id).orderBy('id').execute();
    expect(audit.map((a) => [a.action, a.actor_kind])).toEqual([['user.updated', 'cli'], ['user.updated', 'cli']]);
  }, 180_000);
});
