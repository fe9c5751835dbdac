import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './postgres-servers.ts';

/** Debian's PgBouncer (package pgbouncer). */
export const PGBOUNCER = process.env.PGBOUNCER ?? '/usr/sbin/pgbouncer';
export const pgbouncerInstalled = existsSync(PGBOUNCER);

export type PgBouncerPoolMode = 'session' | 'transaction';

/** A PgBouncer of a test's own, on a free port, in front of one PostgreSQL server. */
export interface PgBouncerServer {
  port: number;
  /** postgres://<user>@127.0.0.1:<port>/<database>: `database` on the PostgreSQL behind it. */
  url(database: string, user?: string): string;
  /** PgBouncer's log, for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The PostgreSQL behind it. */
  host?: string;
  port?: number;
  poolMode: PgBouncerPoolMode;
  /** Server connections per database and user (PgBouncer's default_pool_size). */
  poolSize?: number;
}

/**
 * Starts PgBouncer with an ini and a userlist of its own in a temporary directory: every database
 * of the PostgreSQL at host:port, trust authentication, `pool_mode` as asked. PgBouncer refuses to run
 * as root, so as root it runs as the postgres user.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncerServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetcore-pgbouncer-'));
  chmodSync(dir, 0o777); // the postgres user writes the log here when the test runs as root
  const port = await freePort();
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${options.host ?? '127.0.0.1'} port=${options.port ?? 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pool_mode = ${options.poolMode}`,
      `default_pool_size = ${options.poolSize ?? 20}`,
      'max_client_conn = 500',
      `logfile = ${logFile}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER, join(dir, 'pgbouncer.ini')]] : [PGBOUNCER, [join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log = () => `${output}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`;
  const server: PgBouncerServer = {
    port,
    url: (database, user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${database}`,
    log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // runuser passes SIGTERM on to PgBouncer, which exits at once ("fast exit").
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await answering(server.url('postgres'), child, log);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/** Waits until a query through it answers (10 s at most). */
async function answering(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}) before it answered\n${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`pgbouncer did not answer in 10 s: ${(error as Error).message}\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
