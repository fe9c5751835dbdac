import { findAccount } from '../../db/accounts.ts';
import type { AccessScope } from '../../db/access-scope.ts';
import type { AuditActor } from '../../db/audit-log.ts';
import type { Db } from '../../db/database.ts';
import { usersOfAccount } from '../../db/users.ts';
import { createVehicleGroup, updateVehicleGroup, vehicleGroup, vehicleGroupHome, type VehicleGroupRow } from '../../db/vehicle-groups.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { parseMode } from '../mode-option.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const groupUsage = [
  'fleet group create --account ID --name NAME [--mode live|test] [--json]',
  'fleet group add-vehicle --group ID --imei IMEI [--json]',
  'fleet group grant --group ID --user ID|EMAIL [--json]',
].join('\n       ');

/** The operator, as the audit log records a change made with `fleet` (no user, no key, no address). */
const operator = (scope: AccessScope): AuditActor => ({ kind: 'cli', accountId: scope.accountId, mode: scope.mode, userId: null, remoteAddress: null });

/** `fleet group`: vehicle groups, as POST and PATCH /api/v1/groups make them (docs/api/groups.md). */
export async function groupCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'create') return createGroup(config, rest);
  if (action === 'add-vehicle' || action === 'grant') return changeGroup(config, action, rest);
  throw new UsageError(`usage: ${groupUsage}`);
}

function print(json: boolean, group: VehicleGroupRow, what: string): void {
  printResult(
    json,
    { id: group.id, name: group.name, vehicleIds: group.vehicle_ids, userIds: group.user_ids },
    `group ${group.id} (${group.name}) ${what}: vehicles ${group.vehicle_ids.join(', ') || '(none)'}; users ${group.user_ids.join(', ') || '(none)'}`,
  );
}

async function createGroup(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { account: { type: 'string' }, name: { type: 'string' }, mode: { type: 'string' } });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const name = requiredString(parsed, 'name').trim();
  if (name.length === 0 || name.length > 200) throw new UsageError('--name must be 1 to 200 characters');
  const mode = parseMode(optionalString(parsed, 'mode'));
  const group = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    const scope = { accountId, mode, userId: 0 };
    return createVehicleGroup(db, scope, operator(scope), { name });
  });
  print(parsed.json, group, 'created');
}

async function changeGroup(config: Config, action: 'add-vehicle' | 'grant', argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, action === 'grant' ? { group: { type: 'string' }, user: { type: 'string' } } : { group: { type: 'string' }, imei: { type: 'string' } });
  const groupId = positiveInteger(requiredString(parsed, 'group'), '--group');
  const group = await withDatabase(config, async ({ db }) => {
    const home = await vehicleGroupHome(db, groupId);
    if (!home) throw new DomainError('not_found', `group ${groupId} does not exist`);
    const scope = { ...home, userId: 0 };
    const current = (await vehicleGroup(db, scope, groupId))!;
    const changes = action === 'grant'
      ? { userIds: [...current.user_ids, await userOf(db, home.accountId, requiredString(parsed, 'user'))] }
      : { vehicleIds: [...current.vehicle_ids, requiredString(parsed, 'imei')] };
    return (await updateVehicleGroup(db, scope, operator(scope), groupId, changes))!;
  });
  print(parsed.json, group, action === 'grant' ? 'granted' : 'changed');
}

async function userOf(db: Db, accountId: number, ref: string): Promise<number> {
  const user = (await usersOfAccount(db, accountId)).find((u) => String(u.id) === ref || u.email === ref.toLowerCase());
  if (!user) throw new DomainError('not_found', `user ${ref} is not in account ${accountId}`);
  return user.id;
}
