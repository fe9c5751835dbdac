import { findAccount } from '../../db/accounts.ts';
import { addDevice, setDeviceSpeedLimit } from '../../db/devices.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { usersOfAccount } from '../../db/users.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { parseSpeedLimit } from '../speed-limit-option.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { parseMode } from '../mode-option.ts';

export const deviceUsage = [
  'fleet device add --account ID --imei IMEI --name NAME --plates PLATES [--users ID|EMAIL,...] [--mode live|test] [--protocol NAME] [--speed-limit KMH] [--json]',
  'fleet device set --imei IMEI --speed-limit KMH|none [--json]',
].join('\n       ');

export async function deviceCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'set') return setDevice(config, rest);
  if (action !== 'add') throw new UsageError(`usage: ${deviceUsage}`);
  const parsed = parseCommand(rest, {
    account: { type: 'string' },
    imei: { type: 'string' },
    name: { type: 'string' },
    plates: { type: 'string' },
    users: { type: 'string' },
    mode: { type: 'string' },
    protocol: { type: 'string' },
    'speed-limit': { type: 'string' },
  });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const imei = requiredString(parsed, 'imei');
  const name = requiredString(parsed, 'name');
  const plates = requiredString(parsed, 'plates');
  const mode = parseMode(optionalString(parsed, 'mode'));
  const userRefs = optionalString(parsed, 'users')?.split(',').map((u) => u.trim()).filter(Boolean);
  const rawLimit = optionalString(parsed, 'speed-limit');
  const speedLimitKmh = rawLimit === undefined ? null : parseSpeedLimit(rawLimit);

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
    return addDevice(db, { accountId, imei, name, plates, mode, userIds, protocol: optionalString(parsed, 'protocol') ?? null, speedLimitKmh });
  });
  printResult(
    parsed.json,
    {
      id: device.id, accountId: device.account_id, imei: device.imei, name: device.name, plates: device.plates, mode: device.mode, protocol: device.protocol,
      speedLimitKmh: device.speed_limit_kmh, userIds,
    },
    `device ${device.id} added: ${device.name} (IMEI ${device.imei}, ${device.mode}), visible to user ${userIds.join(', ') || '(none)'}`,
  );
}

/** `fleet device set`: a vehicle's own speed limit (`none`: its account's applies). */
async function setDevice(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { imei: { type: 'string' }, 'speed-limit': { type: 'string' } });
  const imei = requiredString(parsed, 'imei');
  const speedLimitKmh = parseSpeedLimit(requiredString(parsed, 'speed-limit'));
  const device = await withDatabase(config, ({ db }) => setDeviceSpeedLimit(db, imei, speedLimitKmh));
  if (!device) throw new DomainError('not_found', `no device has IMEI ${imei}`);
  printResult(
    parsed.json,
    { id: device.id, imei: device.imei, name: device.name, speedLimitKmh: device.speed_limit_kmh },
    `device ${device.id} (${device.name}): ${device.speed_limit_kmh === null ? "no speed limit of its own (its account's applies)" : `speed limit ${device.speed_limit_kmh} km/h`}`,
  );
}
