import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterLayout } from './cluster-layout.ts';
import { isRunning, readPid, sleep, stopProcess } from './pid-file.ts';
import { DATABASE_NAME } from './postgres-pair.ts';
import { ownedDirectory, passableByPostgres, run } from './postgres-user.ts';

/** PGBOUNCER_BIN names another binary; Debian's pgbouncer package installs it here. */
export const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

const pidFile = (layout: ClusterLayout) => join(layout.paths.pgbouncer, 'pgbouncer.pid');

/** pgbouncer.ini: the fleet database on the primary, trusting 127.0.0.1 as the primary does. */
export function pgbouncerConfig(layout: ClusterLayout): string {
  const dir = layout.paths.pgbouncer;
  return [
    '[databases]',
    `${DATABASE_NAME} = host=127.0.0.1 port=${layout.postgresPrimaryPort} dbname=${DATABASE_NAME}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${layout.pgbouncerPort}`,
    `unix_socket_dir = ${dir}`,
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    // layout.poolMode (LOCAL_CLUSTER_POOL_MODE): session by default, transaction to try fleet's DATABASE_POOL_MODE=transaction.
    `pool_mode = ${layout.poolMode}`,
    // Six fleet processes with a pool of 10 each, and a listener: in session mode every client holds a server connection.
    'max_client_conn = 500',
    'default_pool_size = 150',
    'admin_users = postgres',
    'ignore_startup_parameters = extra_float_digits',
    `pidfile = ${pidFile(layout)}`,
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    '',
  ].join('\n');
}

export function pgbouncerRunning(layout: ClusterLayout): boolean {
  return isRunning(readPid(pidFile(layout)), 'pgbouncer');
}

export async function startPgbouncer(layout: ClusterLayout): Promise<void> {
  if (pgbouncerRunning(layout)) return;
  passableByPostgres(layout.dir);
  const dir = await ownedDirectory(layout.paths.pgbouncer);
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(config, pgbouncerConfig(layout));
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  // -d: it forks into the background and writes its pid file; it refuses root, hence as postgres.
  await run(PGBOUNCER, ['-d', config], { asPostgres: true });
  const deadline = Date.now() + 10_000;
  while (!pgbouncerRunning(layout)) {
    if (Date.now() > deadline) throw new Error(`pgbouncer did not start (log: ${join(dir, 'pgbouncer.log')})`);
    await sleep(50);
  }
}

/** SIGINT: PgBouncer's safe shutdown, which lets running queries finish. */
export async function stopPgbouncer(layout: ClusterLayout): Promise<void> {
  await stopProcess(pidFile(layout), 'pgbouncer', 'SIGINT', 10_000);
}
