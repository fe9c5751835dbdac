import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { StartupError } from '../runtime/startup-error.ts';
import { ownerOnlyDirectory } from './owner-only-directory.ts';
import { PgliteSocketServer } from './pglite-socket-server.ts';
import { trimmedPostgis } from './postgis-bundle.ts';

/** pg clients find a Unix socket as `<host>/.s.PGSQL.<port>`; the port is only part of the file name. */
export const EMBEDDED_SOCKET_PORT = 5432;
const SOCKET_NAME = `.s.PGSQL.${EMBEDDED_SOCKET_PORT}`;
// Unix socket paths are limited to 107 bytes on Linux.
const MAX_SOCKET_PATH = 100;

/**
 * PGlite's default of 128 MB of shared buffers is resident memory of this process once the pages
 * are touched, and is sized for a server with many backends; a fleet on one laptop reads its hot
 * rows from a few MB. 16 MB keeps the bench's and the demo's working set cached (docs/performance.md#memory).
 */
const SHARED_BUFFERS = '16MB';

/** PGlite's own start parameters plus ours; passing startParams replaces its defaults, so they are repeated. */
function startParams(): string[] {
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`];
}

export interface EmbeddedPostgres {
  /** Directory holding the socket: the `host` a pg client connects to. */
  socketDir: string;
  stop(): Promise<void>;
}

/** Where the socket of the embedded database of `dataDir` lives; deterministic so the CLI finds a running server. */
export function embeddedSocketDir(dataDir: string): string {
  if (join(dataDir, SOCKET_NAME).length <= MAX_SOCKET_PATH) return dataDir;
  const digest = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join(tmpdir(), `fleetcore-${digest}`);
}

function lockPath(dataDir: string): string {
  return join(dataDir, 'fleet.lock');
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of the live process that holds `dataDir`, if any. */
export function embeddedOwner(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockPath(dataDir), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

// PGlite keeps the whole cluster in one process: two processes opening the same files would corrupt it.
function acquireLock(dataDir: string): () => void {
  const path = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = embeddedOwner(dataDir);
      if (owner !== undefined && owner !== process.pid) {
        throw new StartupError(`DATA_DIR ${dataDir} is in use by process ${owner} (a running fleet server)`);
      }
      rmSync(path, { force: true });
    }
  }
  throw new StartupError(`could not lock DATA_DIR ${dataDir}`);
}

/** True when a server process holds `dataDir` and answers on its socket. */
export async function embeddedServerReachable(dataDir: string): Promise<boolean> {
  if (embeddedOwner(dataDir) === undefined) return false;
  const path = join(embeddedSocketDir(dataDir), SOCKET_NAME);
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Opens PGlite with PostGIS on `dataDir/pgdata` and serves it on a Unix socket, so this process,
 * and CLI commands run while it lives, reach it through the same `pg` driver as a real server. The
 * data directory, the socket's directory and the socket are this user's alone: the socket asks for
 * no password.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  ownerOnlyDirectory(dataDir, 'DATA_DIR');
  const release = acquireLock(dataDir);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create({
      dataDir: join(dataDir, 'pgdata'),
      // The core of PostGIS only, unpacked once from the installed package into the data directory.
      extensions: { postgis: trimmedPostgis(join(dataDir, 'cache')) },
      startParams: startParams(),
    });
    const socketDir = embeddedSocketDir(dataDir);
    ownerOnlyDirectory(socketDir, 'The embedded database\'s socket directory');
    const socketPath = join(socketDir, SOCKET_NAME);
    if (existsSync(socketPath)) rmSync(socketPath);
    const server = new PgliteSocketServer(db);
    await server.listen(socketPath);
    chmodSync(socketPath, 0o600);
    const opened = db;
    return {
      socketDir,
      async stop() {
        await server.close();
        await opened.close();
        rmSync(socketPath, { force: true });
        release();
      },
    };
  } catch (error) {
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}
