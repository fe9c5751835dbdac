import { sql } from 'kysely';
import { DomainError } from '../domain/domain-error.ts';
import type { AccessScope } from './access-scope.ts';
import type { AuditActor } from './audit-log.ts';
import { recordAudit } from './audit-log.ts';
import { inTransaction, type Db } from './database.ts';
import { isUniqueViolation } from './unique-violation.ts';

/** A vehicle group as the API shows it: its vehicles (by IMEI) and its users. Groups are per account and mode, as vehicles are. */
export interface VehicleGroupRow {
  id: number;
  name: string;
  vehicle_ids: string[];
  user_ids: number[];
  created_at: Date;
  updated_at: Date;
}

export interface GroupChanges {
  name?: string;
  /** IMEIs of the account's vehicles of the scope's mode; replaces the group's vehicles. */
  vehicleIds?: string[];
  /** Users of the account; replaces the group's users. */
  userIds?: number[];
}

/** The scope's groups (or the one `id`) of its account and mode, ordered by name, with their vehicles and users. */
async function groupRows(db: Db, scope: AccessScope, id?: number): Promise<VehicleGroupRow[]> {
  let query = db
    .selectFrom('vehicle_groups as g')
    .select(['g.id', 'g.name', 'g.created_at', 'g.updated_at'])
    .select((eb) => [
      sql<string[]>`coalesce((SELECT array_agg(d.imei ORDER BY d.imei) FROM vehicle_group_devices gd JOIN devices d ON d.id = gd.device_id
        WHERE gd.group_id = ${eb.ref('g.id')} AND d.mode = ${scope.mode}), '{}')`.as('vehicle_ids'),
      sql<number[]>`coalesce((SELECT array_agg(ug.user_id ORDER BY ug.user_id) FROM user_vehicle_groups ug
        WHERE ug.group_id = ${eb.ref('g.id')}), '{}')`.as('user_ids'),
    ])
    .where('g.account_id', '=', scope.accountId)
    .where('g.mode', '=', scope.mode)
    .orderBy('g.name')
    .orderBy('g.id');
  if (id !== undefined) query = query.where('g.id', '=', id);
  return query.execute();
}

export function vehicleGroups(db: Db, scope: AccessScope): Promise<VehicleGroupRow[]> {
  return groupRows(db, scope);
}

export async function vehicleGroup(db: Db, scope: AccessScope, id: number): Promise<VehicleGroupRow | undefined> {
  return (await groupRows(db, scope, id))[0];
}

/** The groups holding a device, by name: what the vehicles API shows as a vehicle's `groups`. */
export async function groupsOfDevice(db: Db, deviceId: number): Promise<{ id: number; name: string }[]> {
  return db
    .selectFrom('vehicle_group_devices as gd')
    .innerJoin('vehicle_groups as g', 'g.id', 'gd.group_id')
    .select(['g.id', 'g.name'])
    .where('gd.device_id', '=', deviceId)
    .orderBy('g.name')
    .orderBy('g.id')
    .execute();
}

/** Each user's groups of the scope's account and mode, by name: what the users API shows as a user's `groups`. */
export async function groupsOfUsers(db: Db, scope: Pick<AccessScope, 'accountId' | 'mode'>, userIds: number[]): Promise<Map<number, { id: number; name: string }[]>> {
  const byUser = new Map<number, { id: number; name: string }[]>(userIds.map((u) => [u, []]));
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('user_vehicle_groups as ug')
    .innerJoin('vehicle_groups as g', 'g.id', 'ug.group_id')
    .select(['ug.user_id', 'g.id', 'g.name'])
    .where('g.account_id', '=', scope.accountId)
    .where('g.mode', '=', scope.mode)
    .where('ug.user_id', 'in', userIds)
    .orderBy('g.name')
    .orderBy('g.id')
    .execute();
  for (const row of rows) byUser.get(row.user_id)?.push({ id: row.id, name: row.name });
  return byUser;
}

async function deviceIdsOf(trx: Db, scope: AccessScope, imeis: string[]): Promise<number[]> {
  const unique = [...new Set(imeis)];
  if (unique.length === 0) return [];
  const rows = await trx
    .selectFrom('devices')
    .select(['id', 'imei'])
    .where('account_id', '=', scope.accountId)
    .where('mode', '=', scope.mode)
    .where('imei', 'in', unique)
    .execute();
  const known = new Set(rows.map((r) => r.imei));
  const unknown = unique.filter((imei) => !known.has(imei));
  if (unknown.length > 0) throw new DomainError('invalid', `vehicle_ids: no ${scope.mode} vehicle ${unknown.map((v) => `"${v}"`).join(', ')} in this account`);
  return rows.map((r) => r.id);
}

async function checkUsers(trx: Db, scope: AccessScope, userIds: number[]): Promise<number[]> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return [];
  const rows = await trx.selectFrom('users').select('id').where('account_id', '=', scope.accountId).where('id', 'in', unique).execute();
  const known = new Set(rows.map((r) => r.id));
  const foreign = unique.filter((u) => !known.has(u));
  if (foreign.length > 0) throw new DomainError('invalid', `user_ids: user ${foreign.join(', ')} does not belong to this account`);
  return unique;
}

async function replaceMembers(trx: Db, scope: AccessScope, groupId: number, changes: GroupChanges): Promise<void> {
  if (changes.vehicleIds !== undefined) {
    const deviceIds = await deviceIdsOf(trx, scope, changes.vehicleIds);
    await trx
      .deleteFrom('vehicle_group_devices')
      .where('group_id', '=', groupId)
      .$if(deviceIds.length > 0, (q) => q.where('device_id', 'not in', deviceIds))
      .execute();
    if (deviceIds.length > 0) {
      await trx
        .insertInto('vehicle_group_devices')
        .values(deviceIds.map((device_id) => ({ group_id: groupId, device_id })))
        .onConflict((oc) => oc.columns(['group_id', 'device_id']).doNothing())
        .execute();
    }
  }
  if (changes.userIds !== undefined) {
    const userIds = await checkUsers(trx, scope, changes.userIds);
    await trx
      .deleteFrom('user_vehicle_groups')
      .where('group_id', '=', groupId)
      .$if(userIds.length > 0, (q) => q.where('user_id', 'not in', userIds))
      .execute();
    if (userIds.length > 0) {
      await trx
        .insertInto('user_vehicle_groups')
        .values(userIds.map((user_id) => ({ group_id: groupId, user_id })))
        .onConflict((oc) => oc.columns(['user_id', 'group_id']).doNothing())
        .execute();
    }
  }
}

function nameTaken(name: string): DomainError {
  return new DomainError('conflict', `a group named "${name}" already exists in this account and mode`);
}

/** Creates a group in the scope's account and mode, and audits it in the same transaction. */
export async function createVehicleGroup(db: Db, scope: AccessScope, actor: AuditActor, group: GroupChanges & { name: string }): Promise<VehicleGroupRow> {
  const name = group.name.trim();
  return inTransaction(db, async (trx) => {
    let id: number;
    try {
      ({ id } = await trx.insertInto('vehicle_groups').values({ account_id: scope.accountId, mode: scope.mode, name }).returning('id').executeTakeFirstOrThrow());
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    await replaceMembers(trx, scope, id, group);
    const row = (await vehicleGroup(trx, scope, id))!;
    await recordAudit(trx, actor, {
      action: 'vehicle_group.created', targetType: 'vehicle_group', targetId: String(id),
      details: { name, vehicleIds: row.vehicle_ids, userIds: row.user_ids },
    });
    return row;
  });
}

/** Changes what is given; undefined when the scope has no such group. */
export async function updateVehicleGroup(db: Db, scope: AccessScope, actor: AuditActor, id: number, changes: GroupChanges): Promise<VehicleGroupRow | undefined> {
  return inTransaction(db, async (trx) => {
    const before = await vehicleGroup(trx, scope, id);
    if (!before) return undefined;
    const name = changes.name?.trim();
    try {
      await trx
        .updateTable('vehicle_groups')
        .set({ ...(name !== undefined ? { name } : {}), updated_at: sql<Date>`now()` })
        .where('id', '=', id)
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name!);
      throw error;
    }
    await replaceMembers(trx, scope, id, changes);
    const after = (await vehicleGroup(trx, scope, id))!;
    await recordAudit(trx, actor, {
      action: 'vehicle_group.updated', targetType: 'vehicle_group', targetId: String(id),
      details: changeDetails(before, after),
    });
    return after;
  });
}

function changeDetails(before: VehicleGroupRow, after: VehicleGroupRow): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  if (before.name !== after.name) details.name = { from: before.name, to: after.name };
  const added = <T>(a: T[], b: T[]) => b.filter((x) => !a.includes(x));
  const vehiclesAdded = added(before.vehicle_ids, after.vehicle_ids);
  const vehiclesRemoved = added(after.vehicle_ids, before.vehicle_ids);
  const usersAdded = added(before.user_ids, after.user_ids);
  const usersRemoved = added(after.user_ids, before.user_ids);
  if (vehiclesAdded.length > 0) details.vehiclesAdded = vehiclesAdded;
  if (vehiclesRemoved.length > 0) details.vehiclesRemoved = vehiclesRemoved;
  if (usersAdded.length > 0) details.usersAdded = usersAdded;
  if (usersRemoved.length > 0) details.usersRemoved = usersRemoved;
  return details;
}

/** Deletes a group (its users no longer see its vehicles through it); false when the scope has no such group. */
export async function deleteVehicleGroup(db: Db, scope: AccessScope, actor: AuditActor, id: number): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const before = await vehicleGroup(trx, scope, id);
    if (!before) return false;
    await trx.deleteFrom('vehicle_groups').where('id', '=', id).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).execute();
    await recordAudit(trx, actor, {
      action: 'vehicle_group.deleted', targetType: 'vehicle_group', targetId: String(id),
      details: { name: before.name, vehicleIds: before.vehicle_ids, userIds: before.user_ids },
    });
    return true;
  });
}

/** The account and mode a group belongs to, for the command line (which names a group by id alone). */
export async function vehicleGroupHome(db: Db, id: number): Promise<{ accountId: number; mode: AccessScope['mode'] } | undefined> {
  const row = await db.selectFrom('vehicle_groups').select(['account_id', 'mode']).where('id', '=', id).executeTakeFirst();
  return row && { accountId: row.account_id, mode: row.mode };
}
