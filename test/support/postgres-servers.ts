import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PG_BIN } from '../../deploy/local-cluster/postgres-pair.ts';
import { ownedDirectory, run } from '../../deploy/local-cluster/postgres-user.ts';

/** A PostgreSQL server of a test's own, on a free port, in a directory deleted when it stops. */
export interface PostgresServer {
  port: number;
  dataDir: string;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** Stops it (`fast` by default; `immediate` is a crash) and keeps the directory, to start it again. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops it if running and deletes its directory. */
  destroy(): Promise<void>;
}

/** initdb, pg_ctl and pg_basebackup refuse root: as root they run as the postgres user, which owns the directories. */
const pg = (binary: string, args: string[]) => run(join(PG_BIN, binary), args, { asPostgres: true });

/** A new temporary directory, owned by the postgres user when running as root. */
const temporaryDirectory = (prefix: string) => ownedDirectory(mkdtempSync(join(tmpdir(), prefix)));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function server(dataDir: string, port: number, root: string): PostgresServer {
  let running = false;
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c wal_level=replica -c max_wal_senders=5 -c fsync=off`;
  return {
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await pg('pg_ctl', ['-D', dataDir, '-l', join(root, 'log'), '-o', options, '-w', 'start']);
      running = true;
    },
    async stop(mode = 'fast') {
      if (!running) return;
      running = false;
      await pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    async destroy() {
      await this.stop('immediate').catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A new cluster, trusting every local connection (replication included), started. */
export async function startPrimary(): Promise<PostgresServer> {
  const root = await temporaryDirectory('fleetcore-pg-primary-');
  const dataDir = join(root, 'data');
  const primary = server(dataDir, await freePort(), root);
  try {
    await pg('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync']);
    await primary.start();
    return primary;
  } catch (error) {
    await primary.destroy();
    throw error;
  }
}

/** A streaming replica of `primary` (pg_basebackup -R, after an immediate checkpoint), started on a port of its own. */
export async function startReplica(primary: PostgresServer): Promise<PostgresServer> {
  const root = await temporaryDirectory('fleetcore-pg-replica-');
  const dataDir = join(root, 'data');
  const replica = server(dataDir, await freePort(), root);
  try {
    await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '--checkpoint=fast']);
    await replica.start();
    return replica;
  } catch (error) {
    await replica.destroy();
    throw error;
  }
}
