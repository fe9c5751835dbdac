import { createAccount, setAccountSpeedLimit } from '../../db/accounts.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { parseSpeedLimit } from '../speed-limit-option.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const accountUsage = [
  'fleet account create --name NAME [--speed-limit KMH] [--json]',
  'fleet account set --account ID --speed-limit KMH|none [--json]',
].join('\n       ');

const limitText = (kmh: number | null) => (kmh === null ? 'no speed limit' : `speed limit ${kmh} km/h`);

export async function accountCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'create') {
    const parsed = parseCommand(rest, { name: { type: 'string' }, 'speed-limit': { type: 'string' } });
    const name = requiredString(parsed, 'name');
    const raw = optionalString(parsed, 'speed-limit');
    const speedLimitKmh = raw === undefined ? null : parseSpeedLimit(raw);
    const account = await withDatabase(config, ({ db }) => createAccount(db, name, { speedLimitKmh }));
    printResult(
      parsed.json,
      { id: account.id, name: account.name, speedLimitKmh: account.speed_limit_kmh },
      `account ${account.id} created: ${account.name}${account.speed_limit_kmh === null ? '' : ` (${limitText(account.speed_limit_kmh)})`}`,
    );
    return;
  }
  if (action === 'set') {
    const parsed = parseCommand(rest, { account: { type: 'string' }, 'speed-limit': { type: 'string' } });
    const id = positiveInteger(requiredString(parsed, 'account'), '--account');
    const speedLimitKmh = parseSpeedLimit(requiredString(parsed, 'speed-limit'));
    const account = await withDatabase(config, ({ db }) => setAccountSpeedLimit(db, id, speedLimitKmh));
    if (!account) throw new DomainError('not_found', `account ${id} does not exist`);
    printResult(
      parsed.json,
      { id: account.id, name: account.name, speedLimitKmh: account.speed_limit_kmh },
      `account ${account.id} (${account.name}): ${limitText(account.speed_limit_kmh)} for vehicles without their own`,
    );
    return;
  }
  throw new UsageError(`usage: ${accountUsage}`);
}
