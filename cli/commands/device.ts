import { findAccount } from '../../db/accounts.ts';
import { addDevice } from '../../db/devices.ts';
import { DomainError } from '../../db/domain-error.ts';
import { usersOfAccount } from '../../db/users.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { parseMode } from './key.ts';

export const deviceUsage =
  'fleet device add --account ID --imei IMEI --name NAME --plates PLATES [--users ID|EMAIL,...] [--mode live|test] [--protocol NAME] [--json]';

export async function deviceCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'add') throw new UsageError(`usage: ${deviceUsage}`);
  const parsed = parseCommand(rest, {
    account: { type: 'string' },
    imei: { type: 'string' },
    name: { type: 'string' },
    plates: { type: 'string' },
    users: { type: 'string' },
    mode: { type: 'string' },
    protocol: { type: 'string' },
  });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const imei = requiredString(parsed, 'imei');
  const name = requiredString(parsed, 'name');
  const plates = requiredString(parsed, 'plates');
  const mode = parseMode(optionalString(parsed, 'mode'));
  const userRefs = optionalString(parsed, 'users')?.split(',').map((u) => u.trim()).filter(Boolean);

  const { device, userIds } = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    let userIds: number[] | undefined;
    if (userRefs) {
      const users = await usersOfAccount(db, accountId);
      userIds = userRefs.map((ref) => {
        const user = users.find((u) => String(u.id) === ref || u.email === ref.toLowerCase());
        if (!user) throw new DomainError('not_found', `user ${ref} is not in account ${accountId}`);
        return user.id;
      });
    }
    return addDevice(db, { accountId, imei, name, plates, mode, userIds, protocol: optionalString(parsed, 'protocol') ?? null });
  });
  printResult(
    parsed.json,
    { id: device.id, accountId: device.account_id, imei: device.imei, name: device.name, plates: device.plates, mode: device.mode, protocol: device.protocol, userIds },
    `device ${device.id} added: ${device.name} (IMEI ${device.imei}, ${device.mode}), visible to user ${userIds.join(', ') || '(none)'}`,
  );
}
