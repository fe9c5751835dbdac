import { Migrator, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import * as foundation from './migrations/0001-foundation.ts';
import * as leanPositions from './migrations/0002-lean-positions.ts';
import * as engine from './migrations/0003-engine.ts';
import * as ingestHardening from './migrations/0004-ingest-hardening.ts';
import * as engineHardening from './migrations/0005-engine-hardening.ts';
import * as eventLog from './migrations/0006-event-log.ts';
import * as webhooks from './migrations/0007-webhooks.ts';
import * as eventProducers from './migrations/0008-event-producers.ts';
import * as fleetData from './migrations/0009-fleet-data.ts';
import * as commands from './migrations/0010-commands.ts';
import * as commandDelivery from './migrations/0011-command-delivery.ts';
import * as access from './migrations/0012-access.ts';
import * as positionsPartitions from './migrations/0013-positions-partitions.ts';
import * as geofenceModes from './migrations/0014-geofence-modes.ts';
import * as mintedCredentials from './migrations/0015-minted-credentials.ts';
import * as webhookFairDelivery from './migrations/0016-webhook-fair-delivery.ts';
import * as addresses from './migrations/0017-addresses.ts';
import * as vehicleAccumulators from './migrations/0018-vehicle-accumulators.ts';
import * as maintenance from './migrations/0019-maintenance.ts';
import * as drivingBehaviour from './migrations/0020-driving-behaviour.ts';
import * as fuelEvents from './migrations/0021-fuel-events.ts';
import * as media from './migrations/0022-media.ts';
import * as userRoles from './migrations/0023-user-roles.ts';
import * as signInSessions from './migrations/0024-sign-in-sessions.ts';
import * as vehicleGroups from './migrations/0025-vehicle-groups.ts';
import * as positionAttributesJson from './migrations/0026-position-attributes-json.ts';
import * as engineStateJson from './migrations/0027-engine-state-json.ts';
import * as firstRunTokens from './migrations/0028-first-run-tokens.ts';
import * as notifications from './migrations/0029-notifications.ts';

/** Every migration, in order. Listed here rather than read from disk so the set is fixed at build time. */
const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-lean-positions': leanPositions,
  '0003-engine': engine,
  '0004-ingest-hardening': ingestHardening,
  '0005-engine-hardening': engineHardening,
  '0006-event-log': eventLog,
  '0007-webhooks': webhooks,
  '0008-event-producers': eventProducers,
  '0009-fleet-data': fleetData,
  '0010-commands': commands,
  '0011-command-delivery': commandDelivery,
  '0012-access': access,
  '0013-positions-partitions': positionsPartitions,
  '0014-geofence-modes': geofenceModes,
  '0015-minted-credentials': mintedCredentials,
  '0016-webhook-fair-delivery': webhookFairDelivery,
  '0017-addresses': addresses,
  '0018-vehicle-accumulators': vehicleAccumulators,
  '0019-maintenance': maintenance,
  '0020-driving-behaviour': drivingBehaviour,
  '0021-fuel-events': fuelEvents,
  '0022-media': media,
  '0023-user-roles': userRoles,
  '0024-sign-in-sessions': signInSessions,
  '0025-vehicle-groups': vehicleGroups,
  '0026-position-attributes-json': positionAttributesJson,
  '0027-engine-state-json': engineStateJson,
  '0028-first-run-tokens': firstRunTokens,
  '0029-notifications': notifications,
};

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Applies every pending migration; returns the names applied by this call. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results }: MigrationResultSet = await migrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies or reverts migrations until `name` is the last one applied: for testing a migration on data written before it. */
export async function migrateTo(db: Kysely<any>, name: string): Promise<void> {
  const { error, results }: MigrationResultSet = await migrator(db).migrateTo(name);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Names of migrations not yet applied; empty when the schema is current. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const all = await migrator(db).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
