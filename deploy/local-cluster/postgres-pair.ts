import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterLayout } from './cluster-layout.ts';
import { isRunning, readPid } from './pid-file.ts';
import { ownedDirectory, passableByPostgres, run } from './postgres-user.ts';

// PostgreSQL 15 (Debian's binaries) as a primary and a streaming replica made from it with
// pg_basebackup -R; the fleet database, with PostGIS, is made on the primary before the copy.

/** Debian's PostgreSQL 15 programs (postgresql-15); PG_BIN names another directory. */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
export const DATABASE_NAME = 'fleet';

type Member = 'primary' | 'replica';

const root = (layout: ClusterLayout, member: Member) => join(layout.paths.postgres, member);
const dataDir = (layout: ClusterLayout, member: Member) => join(root(layout, member), 'data');
const portOf = (layout: ClusterLayout, member: Member) => (member === 'primary' ? layout.postgresPrimaryPort : layout.postgresReplicaPort);
const pg = (program: string, args: string[]) => run(join(PG_BIN, program), args, { asPostgres: true });

/** postgres://postgres@127.0.0.1:<port>/fleet — trusted on 127.0.0.1 only, as initdb --auth=trust sets it up. */
export function postgresUrl(port: number, database = DATABASE_NAME): string {
  return `postgres://postgres@127.0.0.1:${port}/${database}`;
}

export function postgresRunning(layout: ClusterLayout, member: Member): boolean {
  return isRunning(readPid(join(dataDir(layout, member), 'postmaster.pid')), 'postgres');
}

async function start(layout: ClusterLayout, member: Member): Promise<void> {
  if (postgresRunning(layout, member)) return;
  // jit=off: fleet's queries are short and gain nothing from it; through a transaction pooler fleet cannot turn it off per session.
  const options = `-p ${portOf(layout, member)} -k ${root(layout, member)} -c listen_addresses=127.0.0.1 -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c max_connections=200 -c jit=off`;
  await pg('pg_ctl', ['-D', dataDir(layout, member), '-l', join(root(layout, member), 'postgres.log'), '-o', options, '-w', 'start']);
}

export async function startPostgresPair(layout: ClusterLayout): Promise<void> {
  passableByPostgres(layout.dir);
  await ownedDirectory(layout.paths.postgres);
  await ownedDirectory(root(layout, 'primary'));
  if (!existsSync(join(dataDir(layout, 'primary'), 'PG_VERSION'))) {
    await pg('initdb', ['-D', dataDir(layout, 'primary'), '-U', 'postgres', '--auth=trust', '--no-sync']);
  }
  await start(layout, 'primary');
  const psql = (database: string, command: string) =>
    pg('psql', ['-h', '127.0.0.1', '-p', String(layout.postgresPrimaryPort), '-U', 'postgres', '-d', database, '-tAq', '-v', 'ON_ERROR_STOP=1', '-c', command]);
  if ((await psql('postgres', `SELECT 1 FROM pg_database WHERE datname = '${DATABASE_NAME}'`)).trim() !== '1') {
    await psql('postgres', `CREATE DATABASE ${DATABASE_NAME}`);
    await psql(DATABASE_NAME, 'CREATE EXTENSION IF NOT EXISTS postgis');
  }
  await ownedDirectory(root(layout, 'replica'));
  if (!existsSync(join(dataDir(layout, 'replica'), 'PG_VERSION'))) {
    await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(layout.postgresPrimaryPort), '-U', 'postgres', '-D', dataDir(layout, 'replica'), '-R', '-X', 'stream', '--checkpoint=fast']);
  }
  await start(layout, 'replica');
}

/** The replica first, so it does not spend the primary's shutdown trying to reconnect. */
export async function stopPostgresPair(layout: ClusterLayout): Promise<void> {
  for (const member of ['replica', 'primary'] as const) {
    if (postgresRunning(layout, member)) await pg('pg_ctl', ['-D', dataDir(layout, member), '-m', 'fast', '-w', 'stop']);
  }
}
