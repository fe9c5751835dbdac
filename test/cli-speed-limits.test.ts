import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet, type CommandRun } from './support/fleet-command.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Speed limits as an operator sets them: `fleet account` for the account's vehicles, `fleet device` for
// one vehicle's own. Real processes against this file's database.

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

const limits = async (accountId: number, imei: string) => ({
  account: (await database.db.selectFrom('accounts').select('speed_limit_kmh').where('id', '=', accountId).executeTakeFirstOrThrow()).speed_limit_kmh,
  device: (await database.db.selectFrom('devices').select('speed_limit_kmh').where('imei', '=', imei).executeTakeFirstOrThrow()).speed_limit_kmh,
});

describe('fleet account / fleet device --speed-limit', () => {
  it('sets, changes and removes the limits of an account and of a vehicle; refuses bad values and unknown targets', async () => {
    const account = json(await fleet(['account', 'create', '--name', 'Rapid Freight', '--speed-limit', '90', '--json']));
    expect(account).toEqual({ id: expect.any(Number), name: 'Rapid Freight', speedLimitKmh: 90 });
    const imei = `35${Date.now()}`.slice(0, 15);
    const [added, other] = await Promise.all([
      fleet(['device', 'add', '--account', String(account.id), '--imei', imei, '--name', 'Truck 7', '--plates', 'TRK-007', '--speed-limit', '80.5', '--json']),
      fleet(['device', 'add', '--account', String(account.id), '--imei', `${imei}9`, '--name', 'Truck 8', '--plates', 'TRK-008', '--json']),
    ]);
    expect(json(added)).toMatchObject({ imei, speedLimitKmh: 80.5 });
    expect(json(other)).toMatchObject({ speedLimitKmh: null });
    expect(await limits(account.id, imei)).toEqual({ account: 90, device: 80.5 });

    const [deviceSet, accountSet] = await Promise.all([
      fleet(['device', 'set', '--imei', imei, '--speed-limit', 'none']),
      fleet(['account', 'set', '--account', String(account.id), '--speed-limit', '100', '--json']),
    ]);
    expect(deviceSet.code, deviceSet.stderr).toBe(0);
    expect(deviceSet.stdout).toContain("no speed limit of its own (its account's applies)");
    expect(json(accountSet)).toEqual({ id: account.id, name: 'Rapid Freight', speedLimitKmh: 100 });
    expect(await limits(account.id, imei)).toEqual({ account: 100, device: null });

    const [zero, word, unknownDevice, unknownAccount] = await Promise.all([
      fleet(['device', 'set', '--imei', imei, '--speed-limit', '0']),
      fleet(['account', 'set', '--account', String(account.id), '--speed-limit', 'fast']),
      fleet(['device', 'set', '--imei', '000000000000000', '--speed-limit', '50']),
      fleet(['account', 'set', '--account', '999999', '--speed-limit', '50']),
    ]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--speed-limit must be km/h from above 0 to 1000, or none, got "0"');
    expect(zero.stderr).toContain('usage: fleet device add');
    expect(word.code).toBe(2);
    expect(word.stderr).toContain('got "fast"');
    expect(unknownDevice.code).toBe(1);
    expect(unknownDevice.stderr).toContain('no device has IMEI 000000000000000');
    expect(unknownAccount.code).toBe(1);
    expect(unknownAccount.stderr).toContain('account 999999 does not exist');
    expect(await limits(account.id, imei)).toEqual({ account: 100, device: null });
  }, 120_000);
});
